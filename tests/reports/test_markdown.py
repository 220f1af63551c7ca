"""markdown.py: report.md from the document's blocks: each block's Markdown, the table of contents, the messages."""

import pytest
from stepwise_report.render.document import Document, Figure, Heading, Notes, Para, SideBySide, TableBlock
from stepwise_report.render.formats import Table, to_markdown
from stepwise_report.render.markdown import render_markdown


def test_each_block_reads_as_markdown():
    table = Table(["a", "b"], [["1", "2"]])
    blocks = [
        Heading(2, "run x"),
        Notes(["one", "two"]),
        TableBlock(table, "ours"),
        Figure("plots/x/y", "a caption"),
        SideBySide([Para("left"), Para("right")]),
    ]
    md = render_markdown(Document(intro=[Heading(1, "stepwise report"), Para("intro")], runs=[(None, blocks)]))
    assert md.startswith("# stepwise report\n\nintro\n\n## run x\n\n- one\n- two\n\n**ours**\n\n" + to_markdown(table))
    # Both files of a figure: the PNG shown, the SVG linked.
    assert "![a caption](plots/x/y.png)  \n[SVG](plots/x/y.svg)" in md
    assert md.endswith("left\n\nright\n")
    assert "](#run-x)" not in md  # one section needs no table of contents


def test_several_sections_get_a_table_of_contents_and_the_messages_come_before_them():
    doc = Document(
        intro=[Heading(1, "stepwise report")],
        runs=[(None, [Heading(2, "run a"), Para("a")]), (None, [Heading(2, "run b")])],
        tail=[Heading(2, "flags"), Heading(3, "not in the contents")],
        messages=["results not validated"],
    )
    md = render_markdown(doc)
    toc = "- [run a](#run-a)\n- [run b](#run-b)\n- [flags](#flags)\n\n"
    assert toc in md and "(#not-in-the-contents)" not in md
    assert md.index(toc) < md.index("> **note:** results not validated") < md.index("## run a") < md.index("## flags")


def test_an_unknown_block_is_an_error_not_a_silent_gap():
    with pytest.raises(TypeError, match="unknown block str"):
        render_markdown(Document(intro=["a string is no block"]))
