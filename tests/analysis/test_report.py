"""The static HTML report: files, escaping, drill-down pages, and a headless Chromium load."""

from __future__ import annotations

import asyncio
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from analysis.report import write_report
from analysis.report_html import highlight, slug
from tasks.store import Store
from tests.analysis import devtools
from tests.analysis.synthetic import AUDIO_ATTEMPT, RUN

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install chromium)"
)


class Refs(HTMLParser):
    """Collects src/href attributes and tag names of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.refs.append((tag, value))


def parse(path: Path) -> Refs:
    refs = Refs()
    refs.feed(path.read_text(encoding="utf-8"))
    return refs


def local_refs(path: Path) -> list[Path]:
    return [
        (path.parent / value.split("#")[0]).resolve()
        for _, value in parse(path).refs
        if not value.startswith(("#", "data:", "http"))
    ]


def attempt_page(index: Path, attempt_id: str) -> Path:
    return index.parent / "trials" / f"{slug(attempt_id)}.html"


def test_every_local_link_and_image_exists(report_index: Path) -> None:
    pages = [
        report_index,
        report_index.parent / "trials.html",
        attempt_page(report_index, AUDIO_ATTEMPT),
    ]
    for page in pages:
        missing = [p for p in local_refs(page) if not p.exists()]
        assert not missing, f"{page.name}: missing {missing[:3]}"
    imgs = [v for tag, v in parse(report_index).refs if tag == "img"]
    assert len(imgs) >= 6
    assert all((report_index.parent / v).with_suffix(".svg").is_file() for v in imgs)


def test_index_has_headline_breakdowns_and_worst(report_index: Path) -> None:
    html = report_index.read_text(encoding="utf-8")
    for anchor in (
        "id=summary",
        "id=headline",
        "id=figures",
        "id=domains",
        "id=conditions",
        "id=worst",
    ):
        assert anchor in html
    assert "EVA-A_pass pass@1 [95% CI]" in html
    assert "&lt;synthetic&gt; &amp; test" in html  # config text escaped
    assert "<synthetic>" not in html


def test_one_page_per_attempt_with_escaped_text(synth_store: Store, report_index: Path) -> None:
    trials = synth_store.read("trials", RUN)
    pages = list((report_index.parent / "trials").glob("*.html"))
    assert len(pages) == len(trials)
    html = attempt_page(report_index, AUDIO_ATTEMPT).read_text(encoding="utf-8")
    assert "Hello &lt;Acme&gt; &amp; co" in html and "<Acme>" not in html
    assert "&lt;ok&gt; &amp; done" in html  # tool response escaped
    assert "<svg" in html and 'class="seg user"' in html  # the timeline
    for track in ("caller", "agent", "mixed"):
        assert re.search(rf'audio/[^"]*_{track}-[0-9a-f]{{8}}\.wav', html)


def test_misheard_entities_are_highlighted(synth_store: Store, report_index: Path) -> None:
    entities = synth_store.read("entities", RUN)
    missed = entities[~entities["correct"].astype(bool)].iloc[0]
    html = attempt_page(report_index, missed["attempt_id"]).read_text(encoding="utf-8")
    assert f'<mark class="ent-miss">{missed["expected"]}</mark>' in html
    assert "misheard" in html


def test_highlight_escapes_and_marks_without_overlap() -> None:
    out = highlight("code <AB12> then ab12", [("ab12", "ent-ok"), ("<AB12>", "ent-miss")])
    assert out == (
        'code <mark class="ent-miss">&lt;AB12&gt;</mark> then <mark class="ent-ok">ab12</mark>'
    )


def test_text_mode_report_has_no_audio_and_no_timeline(text_report_index: Path) -> None:
    assert text_report_index.parent.parent.name == "reports"
    pages = list((text_report_index.parent / "trials").glob("*.html"))
    assert pages
    html = pages[0].read_text(encoding="utf-8")
    assert "<audio" not in html and "text mode" in html
    assert "<svg" not in html
    assert "Transcript" in html


def test_unknown_run_is_an_error_naming_it(synth_store: Store) -> None:
    with pytest.raises(ValueError, match="no-such-run"):
        write_report(synth_store, "no-such-run")


# --------------------------------------------------------------------------- Chromium
# What a reader's browser shows, measured from the page's own events: each image's
# load/error (settled by the page's load event, which the visit waits for) and each audio
# element's loadedmetadata/error. The page asks for no preload (players load on a click),
# so the probe asks for metadata, as a click would, after listening for the outcome.
PROBE = """(async () => {
  const settled = (el, events, ready) => new Promise(resolve => {
    if (ready()) { resolve(); return; }
    events.forEach(e => el.addEventListener(e, () => resolve(), {once: true}));
  });
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => settled(i, ['load', 'error'], () => i.complete)));
  const audios = Array.from(document.querySelectorAll('audio'));
  window.probeAudio = audios.map(a => 'waiting: ' + a.src);
  await Promise.all(audios.map(async (a, n) => {
    const waiting = settled(a, ['loadedmetadata', 'error'], () => a.readyState >= 1 || a.error);
    if (a.readyState < 1 && !a.error) { a.preload = 'metadata'; a.load(); }
    await waiting;
    window.probeAudio[n] = {src: a.src, readyState: a.readyState, duration: a.duration,
                            error: a.error && a.error.code};
  }));
  return {images: imgs.length, loaded: imgs.filter(i => i.naturalWidth > 0).length,
          audio: audios.length, tracks: window.probeAudio,
          playable: window.probeAudio.filter(t => t.readyState >= 1 && t.error === null &&
                                                  t.duration > 0).length};
})()"""


async def _visit(page: Path, profile: Path) -> tuple[str, dict[str, Any], list[str]]:
    assert CHROMIUM is not None
    async with devtools.chromium(CHROMIUM, profile) as tab:
        try:
            async with asyncio.timeout(devtools.HANG_S):
                await tab.open(page.resolve().as_uri())
                dom = await tab.evaluate("document.documentElement.outerHTML")
                shown = await tab.evaluate(PROBE)
        except TimeoutError as exc:
            exc.add_note(f"page did not settle in {devtools.HANG_S} s; console: {tab.console}")
            async with asyncio.timeout(10):  # the page may be the thing that hangs
                exc.add_note(f"audio so far: {await tab.evaluate('window.probeAudio')}")
            raise
        return dom, shown, tab.console


def visit(page: Path, tmp: Path) -> tuple[str, dict[str, Any], list[str]]:
    """Open ``page`` in a fresh headless Chromium: its DOM, what it shows, its console."""
    return asyncio.run(_visit(page, tmp / "profile"))


@needs_chromium
def test_index_loads_in_chromium_without_console_errors(report_index: Path, tmp_path: Path) -> None:
    dom, shown, console = visit(report_index, tmp_path)
    assert not console, console
    assert "<img" in dom and "Headline" in dom
    assert shown["images"] >= 6 and shown["loaded"] == shown["images"], shown


@needs_chromium
def test_trial_page_plays_audio_in_chromium(report_index: Path, tmp_path: Path) -> None:
    dom, shown, console = visit(attempt_page(report_index, AUDIO_ATTEMPT), tmp_path)
    assert not console, console
    assert "<audio" in dom and "<svg" in dom
    assert shown["audio"] == 3 and shown["playable"] == 3, shown["tracks"]


def test_spoken_codes_are_highlighted_too() -> None:
    out = highlight("it's six three F F E V, dash", [("63FFEV", "ent-ok")])
    assert out == 'it&#x27;s <mark class="ent-ok">six three F F E V</mark>, dash'
    nato = highlight("Kilo Three X-ray nine", [("K3X9", "ent-miss")])
    assert nato == '<mark class="ent-miss">Kilo Three X-ray nine</mark>'
