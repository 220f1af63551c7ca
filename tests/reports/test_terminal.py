"""terminal.py and `report show`: the report's tables as text, what ./ablate prints at the end of a run. The same blocks
as report.md, so every cell (a speedup's interval included) is the same in both; figures are left out; --only picks
one kind of section; bad input is a usage error."""

import os
import subprocess
import sys

import resultgen as g
from conftest import ROOT, run_report
from stepwise_report.render.document import Figure, Heading, Notes, Para, SideBySide, TableBlock
from stepwise_report.render.formats import Table
from stepwise_report.render.terminal import render_text
from table_cells import markdown_rows, text_rows


def test_blocks_as_text_without_figures():
    from stepwise_report.render.document import Document

    doc = Document(messages=["one message"])
    table = Table(["#", "row"], [["0", "baseline"]], caption="a caption", align=["r", "l"])
    named = Table(["", ""], [["device", "cpu"]])
    doc.runs = [
        (
            None,
            [
                Heading(2, "run r"),
                TableBlock(named),
                Heading(4, "suite: detail"),
                SideBySide([TableBlock(table, "ours"), TableBlock(table, "published")]),
                Figure("plots/x", "a figure"),
                Para("a paragraph"),
                Notes(["a note"]),
            ],
        )
    ]
    text = render_text(doc)
    assert text.startswith("note: one message\n\nrun r\n=====\n\ndevice  cpu\n\nsuite: detail:\n\nours:\na caption\n")
    assert "#  row\n-  --------\n0  baseline" in text and "published:\n" in text
    assert "a figure" not in text and "plots/x" not in text
    assert text.endswith("a paragraph\n\n- a note\n")


def test_show_draws_the_same_cells_as_report_md(tmp_path):
    for doc in g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA, skip={2: "tf32 requires a CUDA device"}):
        g.write(tmp_path / "r", doc)
    shown = run_report("show", str(tmp_path / "r"))
    assert shown.returncode == 0, shown.stderr
    made = run_report(str(tmp_path / "r"), "--out", str(tmp_path / "out"))
    assert made.returncode == 0, made.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    terminal = text_rows(shown.stdout, "ours:")
    assert terminal[0][:2] == ["#", "row"] and len(terminal) == len(g.RASCHKA) + 1
    assert markdown_rows(md, "**ours**") == terminal
    assert "## flags" in md and "flags\n=====" not in shown.stdout  # the flag table is the report's, not the terminal's


def test_only_one_kind_of_section_and_bad_input(tmp_path):
    for doc in g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA):
        g.write(tmp_path / "r", doc)
    runs = run_report("show", "--only=runs", str(tmp_path / "r"))
    assert runs.returncode == 0 and "ours:" in runs.stdout
    sweeps = run_report("show", "--only=sweeps", str(tmp_path / "r"))
    assert sweeps.returncode == 0 and "ours:" not in sweeps.stdout
    bad = run_report("show", "--only=tables", str(tmp_path / "r"))
    assert (
        bad.returncode == 2
        and "invalid choice: 'tables'" in bad.stderr
        and "'runs', 'sweeps', 'searches'" in bad.stderr
    )
    missing = run_report("show", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "report: error:" in missing.stderr


def test_show_draws_no_figure_and_leaves_matplotlib_unimported(tmp_path):
    # Every ./ablate ends by running `report show`, so its start is paid once a configuration, and matplotlib's import
    # was most of it: the figures' module imports pyplot when a figure is drawn, and show draws none.
    for doc in g.cumulative("20260301T120000Z_t_cpu", "raschka", g.RASCHKA):
        g.write(tmp_path / "r", doc)
    probe = (
        "import sys; from stepwise_report.cli import main; status = main(['show', sys.argv[1]]); "
        "print('matplotlib' in sys.modules, file=sys.stderr); sys.exit(status)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "reports")}
    shown = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "r")], capture_output=True, text=True, env=env)
    assert shown.returncode == 0 and "ours:" in shown.stdout, shown.stderr
    assert shown.stderr.strip().splitlines()[-1] == "False"
