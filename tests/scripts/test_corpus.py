"""scripts/corpus.py, the set-up step that builds a corpus: the ranks file is the one tiktoken expects for r50k_base,
GPT-2's BPE gives GPT-2's ids, the split keeps validation documents out of the training stream, the files and
meta.json agree, and without GPT-2's BPE the corpus falls back to bytes and says so. The text here is the tests' own."""

import hashlib
import importlib.util
import json
import os
import re
import sys
from array import array
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import corpus  # noqa: E402

# The tests' own sentences, in fortune(6)'s format: entries between lines holding a single %.
TEXT = {
    "wisdom": "Measure twice, cut once.\n%\nA step that is not timed was not taken.\n\t\t-- the harness\n%\n",
    "work": "Hello, world!\n%\nThe loss fell, and nobody knew why.\n%\n%\nstepwise measures what each flag buys.\n",
}


def ranks_file() -> Path | None:
    """GPT-2's ranks where an earlier set-up left them (scripts/setup.sh builds the default corpus), else None."""
    for path in (
        corpus.cache_home() / "tokenizers" / "gpt2.tiktoken",
        corpus.deps_dir() / "tokenizers" / "gpt2.tiktoken",
    ):
        if path.is_file():
            return path
    return None


def needs_gpt2() -> Path:
    if importlib.util.find_spec("tiktoken") is None:
        pytest.skip(f"tiktoken is not installed in {sys.executable} (scripts/requirements.txt pins it)")
    path = ranks_file()
    if path is None:
        pytest.skip("GPT-2's ranks file was never fetched here: scripts/setup.sh --corpus fortunes fetches it")
    return path


@pytest.fixture
def text_dir(tmp_path):
    directory = tmp_path / "text"
    directory.mkdir()
    for name, content in TEXT.items():
        (directory / name).write_text(content)
        (directory / f"{name}.dat").write_bytes(b"\x00\x00\x00\x02")  # strfile's index: not text
    return directory


@pytest.fixture
def corpora(tmp_path, monkeypatch):
    root = tmp_path / "corpora"
    monkeypatch.setenv("STEPWISE_CORPUS_DIR", str(root))
    return root


def read_tokens(path: Path) -> list[int]:
    tokens = array("H")
    tokens.frombytes(path.read_bytes())
    return tokens.tolist()


def documents_of(tokens: list[int], eot: int) -> list[list[int]]:
    docs, current = [], []
    for t in tokens:
        if t == eot:
            docs.append(current)
            current = []
        else:
            current.append(t)
    assert current == [], "every document ends with the end-of-text token"
    return docs


def test_the_ranks_hash_is_the_one_tiktoken_expects_for_r50k_base():
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    if spec is None:
        pytest.skip(f"tiktoken is not installed in {sys.executable}")
    source = Path(spec.origin).read_text()
    found = re.search(r"def r50k_base\(\):.*?expected_hash=\"([0-9a-f]{64})\"", source, re.S)
    assert found, "tiktoken_ext/openai_public.py no longer states r50k_base's expected hash"
    assert corpus.R50K_SHA256 == found.group(1)


def test_a_ranks_file_with_another_hash_is_refused(tmp_path):
    fake = tmp_path / "gpt2.tiktoken"
    fake.write_bytes(b"IQ== 0\n")
    with pytest.raises(corpus.Unavailable, match="not r50k_base's"):
        corpus.checked_ranks(fake)
    with pytest.raises(corpus.Unavailable):
        corpus.find_ranks(fake, timeout=1)


def test_gpt2_bpe_gives_gpt2_ids_for_a_known_string():
    path = needs_gpt2()
    assert path.stat().st_size == 835_554 and hashlib.sha256(path.read_bytes()).hexdigest() == corpus.R50K_SHA256
    encoding = corpus.gpt2_encoding(path)
    assert encoding.n_vocab == 50257 and encoding.eot_token == 50256
    assert encoding.encode_ordinary("Hello, world!") == [15496, 11, 995, 0]
    assert encoding.encode_ordinary(" the") == [262]
    ids = encoding.encode_ordinary("stepwise measures what each flag buys.")
    assert ids == [9662, 3083, 5260, 644, 1123, 6056, 24779, 13]
    assert encoding.decode(ids) == "stepwise measures what each flag buys."


def test_fortune_entries_are_the_text_between_percent_lines(text_dir):
    docs = corpus.fortune_documents(text_dir / "wisdom")
    assert docs == ["Measure twice, cut once.", "A step that is not timed was not taken.\n\t\t-- the harness"]
    assert corpus.fortune_documents(text_dir / "work")[-1] == "stepwise measures what each flag buys."
    assert len(corpus.fortune_documents(text_dir / "work")) == 3, "an empty entry is no document"


def test_the_split_depends_on_the_text_alone_and_holds_out_about_a_tenth():
    docs = [f"document number {i}" for i in range(5000)]
    held = [d for d in docs if corpus.goes_to_val(d)]
    assert 0.08 < len(held) / len(docs) < 0.12
    assert all(corpus.goes_to_val(d) for d in held), "the same text always lands on the same side"


def test_a_byte_level_corpus_and_its_meta_json(text_dir, corpora):
    assert corpus.main(["build", "fortunes", "--tokenizer", "bytes", "--text-dir", str(text_dir)]) == 0
    built = corpora / "fortunes"
    meta = json.loads((built / "meta.json").read_text())
    assert meta["tokenizer"] == "bytes" and meta["vocab_size"] == 256 and meta["eot_token"] == 0
    assert meta["ranks"] is None
    assert meta["source"]["files"] == 2, "strfile's .dat indexes are not text"
    for split in ("train", "val"):
        path = built / f"{split}.bin"
        assert meta[split]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert meta[split]["tokens"] == path.stat().st_size // 2
    train = [bytes(d).decode() for d in documents_of(read_tokens(built / "train.bin"), 0)]
    val = [bytes(d).decode() for d in documents_of(read_tokens(built / "val.bin"), 0)]
    expected = [d for name in sorted(TEXT) for d in corpus.fortune_documents(text_dir / name)]
    assert sorted(train + val) == sorted(expected)
    assert not set(train) & set(val), "a validation document never meets the training stream"
    assert all(corpus.goes_to_val(d) for d in val)
    assert meta["split"]["train_documents"] == len(train) and meta["split"]["val_documents"] == len(val)


def test_a_gpt2_corpus_ends_each_document_with_endoftext(text_dir, corpora):
    ranks = needs_gpt2()
    assert corpus.main(["build", "fortunes", "--ranks", str(ranks), "--text-dir", str(text_dir)]) == 0
    meta = json.loads((corpora / "fortunes" / "meta.json").read_text())
    assert meta["tokenizer"] == "gpt2" and meta["vocab_size"] == 50257 and meta["eot_token"] == 50256
    assert meta["ranks"]["sha256"] == corpus.R50K_SHA256
    docs = documents_of(read_tokens(corpora / "fortunes" / "train.bin"), 50256)
    docs += documents_of(read_tokens(corpora / "fortunes" / "val.bin"), 50256)
    assert [15496, 11, 995, 0] in docs  # "Hello, world!"


def test_without_gpt2s_bpe_it_falls_back_to_bytes_and_says_so(text_dir, corpora, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise corpus.Unavailable("no registry answered")

    monkeypatch.setattr(corpus, "find_ranks", offline)
    assert corpus.main(["build", "fortunes", "--text-dir", str(text_dir)]) == 0
    err = capsys.readouterr().err
    assert "no registry answered" in err and "byte by byte" in err and "scripts/setup.sh --corpus" in err
    assert json.loads((corpora / "fortunes" / "meta.json").read_text())["tokenizer"] == "bytes"
    # Asked for by name, GPT-2's BPE is required: no silent fallback.
    assert corpus.main(["build", "fortunes", "--tokenizer", "gpt2", "--text-dir", str(text_dir)]) == 1
    assert "--tokenizer bytes builds without it" in capsys.readouterr().err


def test_path_and_list_say_what_is_built(text_dir, corpora, capsys):
    assert corpus.main(["path", "fortunes"]) == 1
    assert "scripts/setup.sh --corpus fortunes" in capsys.readouterr().err
    corpus.main(["build", "fortunes", "--tokenizer", "bytes", "--text-dir", str(text_dir)])
    capsys.readouterr()
    assert corpus.main(["path", "fortunes"]) == 0
    assert capsys.readouterr().out.strip() == str(corpora / "fortunes")
    assert corpus.main(["list"]) == 0
    assert re.search(r"fortunes\s+built: .* tokens, bytes", capsys.readouterr().out)


def test_a_rebuild_replaces_the_corpus_whole(text_dir, corpora):
    corpus.main(["build", "fortunes", "--tokenizer", "bytes", "--text-dir", str(text_dir)])
    (text_dir / "work").write_text("Only this now.\n")
    corpus.main(["build", "fortunes", "--tokenizer", "bytes", "--text-dir", str(text_dir)])
    assert sorted(p.name for p in (corpora / "fortunes").iterdir()) == ["meta.json", "train.bin", "val.bin"]
    assert [p.name for p in corpora.iterdir() if not p.name.endswith(".lock")] == ["fortunes"]
    assert json.loads((corpora / "fortunes" / "meta.json").read_text())["source"]["documents"] == 3
    assert os.access(corpora / "fortunes", os.R_OK | os.X_OK)
