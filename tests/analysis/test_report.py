"""The static HTML report: files, escaping, drill-down pages, and a headless Chromium load."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analysis.report import write_report
from analysis.report_html import highlight, slug
from tasks.store import Store
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


def chromium(url: str, tmp: Path, *extra: str) -> tuple[str, str]:
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr",
        "--v=0", *extra, "--dump-dom", url,
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    return done.stdout, done.stderr


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


# The top page's load event waits for the iframe, which waits for its (eager) images, so
# image state is final at that point; audio metadata is polled on virtual-time timers.
PROBE = """<!DOCTYPE html><html><head><link rel=icon href="data:,"></head><body>
<iframe id=f src="{url}" width=1200 height=900></iframe><script>
window.addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument;
  const imgs = Array.from(d.images);
  const audios = Array.from(d.querySelectorAll('audio'));
  const loaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  audios.forEach(a => {{ a.preload = 'metadata'; a.load(); }});
  let tries = 0;
  const poll = () => {{
    const ready = audios.filter(a => a.readyState >= 1 && a.duration > 0).length;
    if (ready < audios.length && tries++ < 600) {{ setTimeout(poll, 100); return; }}
    console.log('PROBE images=' + imgs.length + ' loaded=' + loaded + ' audio=' +
                audios.length + ' playable=' + ready);
  }};
  poll();
}});
</script></body></html>"""


def probe(page: Path, tmp: Path) -> dict[str, int]:
    """Load ``page`` in an iframe and report how many images show and audio tracks load."""
    wrapper = tmp / f"probe-{page.stem}.html"
    wrapper.write_text(PROBE.format(url=page.resolve().as_uri()), encoding="utf-8")
    _, err = chromium(
        wrapper.as_uri(), tmp, "--allow-file-access-from-files", "--virtual-time-budget=20000"
    )
    found = re.search(r"PROBE images=(\d+) loaded=(\d+) audio=(\d+) playable=(\d+)", err)
    assert found, f"probe did not report; console: {console_lines(err)}"
    return dict(
        zip(("images", "loaded", "audio", "playable"), map(int, found.groups()), strict=True)
    )


@needs_chromium
def test_index_loads_in_chromium_without_console_errors(report_index: Path, tmp_path: Path) -> None:
    dom, err = chromium(report_index.as_uri(), tmp_path)
    assert not console_lines(err), console_lines(err)
    assert "<img" in dom and "Headline" in dom
    shown = probe(report_index, tmp_path)
    assert shown["images"] >= 6 and shown["loaded"] == shown["images"]


@needs_chromium
def test_trial_page_plays_audio_in_chromium(report_index: Path, tmp_path: Path) -> None:
    page = attempt_page(report_index, AUDIO_ATTEMPT)
    dom, err = chromium(page.as_uri(), tmp_path)
    assert not console_lines(err), console_lines(err)
    assert "<audio" in dom and "<svg" in dom
    shown = probe(page, tmp_path)
    assert shown["audio"] == 3 and shown["playable"] == 3


def test_spoken_codes_are_highlighted_too() -> None:
    out = highlight("it's six three F F E V, dash", [("63FFEV", "ent-ok")])
    assert out == 'it&#x27;s <mark class="ent-ok">six three F F E V</mark>, dash'
    nato = highlight("Kilo Three X-ray nine", [("K3X9", "ent-miss")])
    assert nato == '<mark class="ent-miss">Kilo Three X-ray nine</mark>'
