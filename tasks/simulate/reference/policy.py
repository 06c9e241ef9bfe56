"""The reference agent's policy: follow the golden trace, but only with what it heard.

The trace decides *what* the agent does (which sentences, which tools, in which order).
Every parameter value of a tool call comes from one of four places, tried in order:

1. something the agent already established (heard earlier, or asked for);
2. an earlier tool response it really received (generated IDs chained with
   :class:`scenarios.chaining.IdChainer` from the trace's stale IDs);
3. the caller: a value the caller said (it appears in one of the caller's trace lines)
   or could say (it is in ``user_goal.information_required``) is read from the *heard*
   words at that place (:mod:`tasks.simulate.dialogue.slots`); if it cannot be read there, the
   agent asks the caller for it;
4. the agent's own decision (enum choices, summaries, computed amounts), from the trace:
   every such use is marked on the attempt as an ``oracle_value`` event
   (:mod:`tasks.simulate.reference.oracle`), so the stored rows say which parameters did
   not come from the conversation.

A value (an ID or any other) the trace took from a response this conversation never
received is unknown to the agent: unless the caller can say it (then it asks), it gives
up rather than use knowledge it could not have. A value taken from one
option of a list the agent got (a flight among those offered) is the option it heard the
caller choose (:mod:`tasks.simulate.reference.choices`), not the trace's; if it did not hear which,
it asks once to hear the choice again.

A lookup whose response says a heard value did not match (:mod:`tasks.simulate.reference.recovery`:
read from the response the agent got, never from the trace's response) is retried once
after asking the caller to spell the values, unless the trace's own plan calls that tool
again after another caller line (it re-asks in its own words). If the retry fails too,
the agent gives up when the spelled values differ from what it first heard or the tool is
an identity check (``tool_type`` "auth"); when the spelling confirmed what it heard and the
tool is a plain lookup, the error is the answer and the agent goes on with its plan.

What the agent reads from the trace beyond its order: the trace's responses only to learn
which of its parameter values came from an earlier response (and the stale->real ID map,
:class:`IdChainer`), and the caller's goal values only to *withhold* them (a trace value
the caller knows is asked for, never used unheard). Which heard words answer the agent's
own question is ranked by the parameter's format from the tool schema, never by the trace
value (:mod:`tasks.simulate.reference.asking`); the trace value only renders the layout
of what was heard (separators, letter case, type). Aliases come from the domain's alias
files, not from the record's database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from scenarios.chaining import IdChainer, is_identifier
from scenarios.models import Scenario
from tasks.simulate.dialogue.cues import is_empty, is_repeat_request
from tasks.simulate.dialogue.script import ScriptStep, build_script
from tasks.simulate.dialogue.slots import SlotReader, signature, tokens
from tasks.simulate.reference.asking import (
    MAX_ASKS_PER_VALUE,
    Paused,
    ValueRequest,
    domain_aliases,
    expectation_for,
    label,
    param_spec,
    question,
    schema_format,
)
from tasks.simulate.reference.choices import find_option, heard_choice, same_place
from tasks.simulate.reference.choices import leaves as _leaves
from tasks.simulate.reference.enums import is_option, match_option, named_options
from tasks.simulate.reference.oracle import OracleReason, log_oracle_uses, oracle_reason
from tasks.simulate.reference.recovery import is_mismatch
from tasks.simulate.tools.gateway import ToolGateway
from tasks.voice.stt import Expectation

GREETING = "Hello! How can I help you today?"
CLOSING = "Thank you for calling. Goodbye!"
NOT_HEARD = "I'm sorry, I didn't catch that. Could you say that again?"
GIVE_UP = (
    "I'm sorry, I'm not able to verify that information, so I can't complete this request "
    "right now."
)
ReplyKind = Literal["greeting", "answer", "question", "repeat", "give_up", "closing"]


class AgentReply(BaseModel):
    """One agent turn in text form."""

    text: str = Field(description="What the agent says")
    kind: ReplyKind = Field(default="answer", description="What the turn does")
    end_call: bool = Field(default=False, description="The agent hangs up after this turn")


@dataclass
class _Resolution:
    params: dict[str, Any]
    missing: list[ValueRequest] = field(default_factory=list)
    heard_keys: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    oracle: list[tuple[str, Any, OracleReason]] = field(default_factory=list)


def _map_leaves(value: Any, fn: Any, path: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _map_leaves(v, fn, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_leaves(v, fn, f"{path}[{i}]") for i, v in enumerate(value)]
    return fn(path, value)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class ReferencePolicy:
    """Trace-guided agent policy over text: ``greet()`` then ``respond(heard)`` per turn."""

    def __init__(self, scenario: Scenario, tools: ToolGateway) -> None:
        self.scenario = scenario
        self.script = build_script(scenario)
        self.tools = tools
        today = scenario.initial_db.get("_current_date") or scenario.current_date_time[:10]
        self.today = date.fromisoformat(str(today))
        self.reader = SlotReader(self.today, domain_aliases(scenario))
        info = scenario.user_goal.get("information_required") or {}
        self.info_sigs = {signature(v) for _, v in _leaves(info) if signature(v)}
        self.line_tokens = [tokens(line) for line in self.script.user_lines]
        self.chainer = IdChainer()
        self.seen: set[str] = set()
        self.values: dict[str, Any] = {}
        self.value_origin: dict[str, Any] = {}
        self.heard_lines: dict[int, str] = {}
        self.next_line = 0
        self.paused: Paused | None = None
        # Params of the first attempt of each call the agent retried.
        self.retried: dict[tuple[int, int], dict[str, Any]] = {}
        self.responses: list[tuple[int, dict[str, Any]]] = []  # (block, response) got
        self.choice_answers: list[str] = []
        self.stuck = False
        self.last_reply = ""

    # ------------------------------------------------------------------ turns

    def greet(self) -> AgentReply:
        return self._reply([GREETING], "greeting")

    def respond(self, heard: str) -> AgentReply:
        if self.stuck:
            return self._reply([CLOSING], "closing")
        if is_empty(heard):
            return AgentReply(text=NOT_HEARD, kind="question")
        if self.last_reply and is_repeat_request(heard):
            return AgentReply(text=self.last_reply, kind="repeat")
        if self.paused is not None:
            return self._take_answer(heard)
        if self.next_line >= len(self.script.user_lines):
            return self._reply([CLOSING], "closing")
        self.heard_lines[self.next_line] = heard
        self.next_line += 1
        return self._run(self.next_line, 0, [])

    @property
    def expects_code(self) -> bool:
        """The agent just asked the caller to spell something."""
        return self.expectation is not None

    @property
    def expectation(self) -> Expectation:
        """What the next caller turn should hold (:func:`asking.expectation_for`)."""
        paused = self.paused
        return None if paused is None else expectation_for(paused.requests[paused.cursor])

    def _reply(self, texts: list[str], kind: ReplyKind) -> AgentReply:
        text = " ".join(t.strip() for t in texts if t.strip()) or "Okay."
        self.last_reply = text
        return AgentReply(text=text, kind=kind)

    # ------------------------------------------------------------------ trace blocks

    def _run(self, block: int, start: int, texts: list[str]) -> AgentReply:
        steps = self.script.blocks[block] if block < len(self.script.blocks) else []
        for index in range(start, len(steps)):
            step = steps[index]
            if step.kind == "say":
                texts.append(self._rewrite(step.text))
                continue
            interruption = self._call(block, index, step)
            if interruption is not None:
                return self._reply([*texts, interruption[0]], interruption[1])
        return self._reply(texts, "answer")

    def _call(self, block: int, index: int, step: ScriptStep) -> tuple[str, ReplyKind] | None:
        """Run one trace call; a question or a give-up when the agent cannot go on."""
        resolved = self._resolve(block, index, step)
        if resolved.unknown:
            self.stuck = True
            return GIVE_UP, "give_up"
        if resolved.missing:
            self.paused = Paused(block, index, resolved.missing)
            return question(resolved.missing[0]), "question"
        log_oracle_uses(self.tools, step.tool, resolved.oracle)
        response = self.tools.call(step.tool, resolved.params)
        self.responses.append((block, response))
        if step.trace_response is not None:
            self.chainer.feed(step.trace_response, response)
        self.seen.update(str(v) for _, v in _leaves(response))
        return self._recover(block, index, step, resolved, response)

    def _recover(
        self,
        block: int,
        index: int,
        step: ScriptStep,
        resolved: _Resolution,
        response: dict[str, Any],
    ) -> tuple[str, ReplyKind] | None:
        """After a call: re-ask, give up or go on, from the response it got (module doc)."""
        heard = [self.values[k] for k in resolved.heard_keys if k in self.values]
        if not heard or not is_mismatch(response, [v for _, v in _leaves(heard)]):
            return None
        first = self.retried.get((block, index))
        if first is not None:
            spec = self.scenario.agent.tool(step.tool)
            confirmed = first == resolved.params
            if confirmed and (spec is None or spec.tool_type != "auth"):
                return None
            self.stuck = True
            return GIVE_UP, "give_up"
        if self.script.retries_in_plan(block, step):
            return None
        self.retried[(block, index)] = resolved.params
        requests = [self._request(k, "retry", step) for k in resolved.heard_keys]
        self.paused = Paused(block, index, requests)
        return question(requests[0], first=True), "question"

    # ------------------------------------------------------------------ values

    def _resolve(self, block: int, index: int, step: ScriptStep) -> _Resolution:
        earlier = {
            _key(v)
            for call in self.script.calls_before(block, index)
            for _, v in _leaves(call.trace_response or {})
        }
        out = _Resolution(params={})

        def pick(path: str, value: Any) -> Any:
            if value is None or isinstance(value, bool):
                return value
            key = _key(value)
            if key in self.values:
                if key in self.value_origin:
                    out.heard_keys.append(key)
                return self.values[key]
            unseen = False
            if key in earlier:
                chained = self.chainer.apply(value)
                if str(chained) in self.seen:
                    return self._chosen(chained, block, out, path)
                if is_identifier(value):
                    # The trace got this ID from a response this conversation never saw.
                    out.unknown.append(path)
                    return value
                unseen = True
            heard = self._from_heard(value, path, step, block)
            if heard is not _MISSING:
                out.heard_keys.append(key)
                return heard
            if self._said_by_caller(value, block) or signature(value) in self.info_sigs:
                out.missing.append(self._request(key, "missing", step, value, path))
                return value
            if unseen:
                out.unknown.append(path)  # a response value it never got: it cannot go on
                return value
            out.oracle.append((path, value, oracle_reason(value, self._enum(step.tool, path))))
            return value

        out.params = _map_leaves(step.params, pick)
        out.heard_keys = list(dict.fromkeys(out.heard_keys))
        return out

    def _chosen(self, value: Any, block: int, out: _Resolution, path: str) -> Any:
        """``value``, or its counterpart in the option the agent heard the caller choose."""
        found = next(
            ((b, f) for b, r in reversed(self.responses) if (f := find_option(value, r))), None
        )
        if found is None:
            return value
        origin, (options, index) = found
        lines = [m for m in range(origin, block) if m in self.heard_lines]
        pick = heard_choice(
            options,
            index,
            [self.script.user_lines[m] for m in lines],
            [*(self.heard_lines[m] for m in lines), *self.choice_answers],
            lambda v, text: bool(self.reader.locate(v, tokens(text))),
        )
        if pick is not None:
            return same_place(value, options[index], options[pick])
        if self.choice_answers:
            out.unknown.append(path)  # asked again and still did not hear which one
        else:
            out.missing.append(ValueRequest(_key(value), value, "choice", None, "choice"))
        return value

    def _said_by_caller(self, value: Any, block: int) -> bool:
        return any(self.reader.locate(value, self.line_tokens[m]) for m in range(block))

    def _from_heard(self, value: Any, path: str, step: ScriptStep, block: int) -> Any:
        """The value read from the heard caller line that carried it, or ``_MISSING``."""
        for line in range(block - 1, -1, -1):
            if line not in self.heard_lines or not self.reader.locate(
                value, self.line_tokens[line]
            ):
                continue
            heard = self.reader.extract_aligned(
                value, self.script.user_lines[line], self.heard_lines[line]
            )
            if heard is None:
                return _MISSING
            enum = self._enum(step.tool, path)
            got = self.reader.format_like(heard, value, enum)
            if named_options(enum) and not is_option(got, enum):
                got = match_option(heard, enum)
                if got is None:
                    return _MISSING  # no option in what it heard there: it asks
            self._remember(value, got)
            return got
        return _MISSING

    def _remember(self, trace_value: Any, got: Any) -> None:
        key = _key(trace_value)
        self.values[key] = got
        self.value_origin[key] = trace_value

    def _enum(self, tool: str, path: str) -> list[Any] | None:
        param = param_spec(self.scenario.agent, tool, path)
        return None if param is None else param.enum

    def _request(
        self,
        key: str,
        purpose: Literal["missing", "retry"],
        step: ScriptStep,
        value: Any = None,
        path: str | None = None,
    ) -> ValueRequest:
        trace_value = self.value_origin.get(key, value)
        if path is None:
            path = next((p for p, v in _leaves(step.params) if _key(v) == key), "value")
        fmt = schema_format(self.scenario.agent, step.tool, path, trace_value)
        enum = self._enum(step.tool, path)
        return ValueRequest(key, trace_value, label(path), enum, purpose, fmt=fmt)

    def _take_answer(self, heard: str) -> AgentReply:
        paused = self.paused
        assert paused is not None
        request = paused.requests[paused.cursor]
        if request.purpose == "choice":
            self.choice_answers.append(heard)  # read again by ``_chosen`` on resuming
            candidates = [heard]
        elif named_options(request.enum):
            candidates = self._option_answers(heard, request)
        else:
            candidates = self.reader.extract_candidates(heard, request.fmt, request.enum)
        if not candidates:
            request.tries += 1
            if request.tries >= MAX_ASKS_PER_VALUE:
                self.stuck, self.paused = True, None
                return self._reply([GIVE_UP], "give_up")
            return self._reply([question(request)], "question")
        if request.purpose != "choice":
            got = self.reader.format_like(candidates[0], request.trace_value, request.enum)
            self._remember(request.trace_value, got)
        paused.cursor += 1
        if paused.cursor < len(paused.requests):
            return self._reply([question(paused.requests[paused.cursor])], "question")
        self.paused = None
        return self._run(paused.block, paused.step, [])

    def _option_answers(self, heard: str, request: ValueRequest) -> list[str]:
        """The enum option the answer names: said as words ("LIST A"), else read as the
        format reads it ("three zero" for "30"); no option at all is no answer (it asks)."""
        option = match_option(heard, request.enum)
        if option is not None:
            return [str(option)]
        found = self.reader.extract_candidates(heard, request.fmt, request.enum)
        return [
            c
            for c in found
            if is_option(
                self.reader.format_like(c, request.trace_value, request.enum), request.enum
            )
        ]

    def _rewrite(self, text: str) -> str:
        """Say the values the agent really has, not the trace's (stale IDs, misheard codes)."""
        pairs = dict(self.chainer.mapping)
        for key, got in self.values.items():
            old = self.value_origin.get(key)
            if isinstance(old, str) and isinstance(got, str) and old != got:
                pairs[old] = got
        for old, new in sorted(pairs.items(), key=lambda p: -len(p[0])):
            if len(old) >= 3:
                text = text.replace(old, new)
        return text


_MISSING: Any = object()
