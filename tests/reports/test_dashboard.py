"""dashboard.py: dashboard.html as one self-contained file of the newest sections, that Chromium renders cleanly."""

import re
import shutil
import subprocess

import pytest


def test_self_contained(report_out):
    page = (report_out / "dashboard.html").read_text()
    assert "<style>" in page
    # Nothing to fetch: no external stylesheet, script or image; every image is inlined.
    assert not re.search(r"<link[^>]+stylesheet|<script[^>]+src=", page)
    srcs = re.findall(r'<img[^>]+src="([^"]+)"', page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_newest_run_tables_and_trends(report_out):
    page = (report_out / "dashboard.html").read_text()
    assert "run 20260302T120000Z_gpt2-tiny_h100" in page
    assert 'id="run-20260301t120000z-gpt2-tiny-h100"' not in page  # older runs live in report.md
    assert "trends across runs" in page and "raschka: trend over runs" not in page  # trends are images
    # Two published suites, and the published torch.compile steps beside the compile comparison.
    assert page.count('<table class="steps">') == 4 and page.count('<table class="published">') == 3
    assert '<table class="matrix">' in page and '<table class="versus">' in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _chromium(profile, *args: str) -> subprocess.CompletedProcess:
    # A profile of its own, so a browser the user has open (or a parallel test) does not interfere.
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian package 'chromium'); the dashboard render check needs a headless browser",
)
def test_renders_in_headless_chromium_without_console_errors(report_out, tmp_path):
    url = (report_out / "dashboard.html").resolve().as_uri()
    proc = _chromium(tmp_path / "profile", "--dump-dom", url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == []
    dom = proc.stdout
    assert "<h1>stepwise dashboard</h1>" in dom
    assert dom.count("<table") >= 10 and "raschka: Raschka's cumulative steps" in dom
    assert "▲ faster" in dom  # the versus table, rendered
    shot = tmp_path / "dashboard.png"
    proc = _chromium(tmp_path / "profile", "--hide-scrollbars", "--window-size=1400,2000", f"--screenshot={shot}", url)
    assert proc.returncode == 0 and shot.stat().st_size > 20_000
