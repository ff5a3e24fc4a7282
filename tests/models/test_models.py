"""hub models list|fetch|verify against a local HTTP server (127.0.0.1, with and without Range)."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import socket
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hub.errors import ConfigError
from hub.cli.models import EXIT_BAD_INPUT, EXIT_NETWORK, EXIT_OK, add_models_parser, run_models
from hub.models import installed_path, load_manifest, models_dir
from hub.models.progress import Progress

REPO = Path(__file__).resolve().parents[2]
BIG = bytes((i * 7 + i // 251) % 256 for i in range(300_000))  # several 64 KiB chunks
CONFIG = b'{"audio": {"sample_rate": 22050}}\n'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("vosk-model-tiny/", "")
        zf.writestr("vosk-model-tiny/am/final.mdl", BIG[:70_000])
        zf.writestr("vosk-model-tiny/conf/model.conf", b"--sample-frequency=16000\n")
    return buf.getvalue()


ZIP = make_zip()


class FileServer:
    """Serves ``files`` on 127.0.0.1; records each request's path and Range header.

    ``ranges``: answer ``Range: bytes=N-`` with 206 (else ignore it: 200, whole file).
    ``cut_after``: for the next request only, send this many body bytes and close.
    """

    def __init__(self, files: dict[str, bytes]):
        self.files, self.ranges, self.cut_after = files, True, None
        self.requests: list[tuple[str, str | None]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                owner.requests.append((self.path, self.headers.get("Range")))
                owner.serve(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/{name}"

    def serve(self, h: BaseHTTPRequestHandler) -> None:
        if h.path.startswith("/moved/"):  # like a hub that redirects to its CDN
            h.send_response(302)
            h.send_header("Location", h.path.removeprefix("/moved"))
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        data = self.files.get(h.path.lstrip("/"))
        if data is None:
            h.send_error(404)
            return
        start, rng = 0, h.headers.get("Range")
        if rng and self.ranges:
            start = int(re.match(r"bytes=(\d+)-$", rng).group(1))
            if start >= len(data):
                h.send_response(416)
                h.send_header("Content-Range", f"bytes */{len(data)}")
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            h.send_response(200)
        body = data[start:]
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if self.cut_after is not None:
            body, self.cut_after = body[: self.cut_after], None
        h.wfile.write(body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server():
    srv = FileServer({"voice.onnx": BIG, "voice.onnx.json": CONFIG, "tiny.zip": ZIP})
    yield srv
    srv.close()


def write_manifest(path: Path, srv: FileServer, **override) -> Path:
    """A manifest for the test server; ``override`` replaces a model's file fields."""
    voice = {"sha256": sha(BIG), "size": len(BIG)} | override.get("voice", {})
    archive = {"sha256": sha(ZIP), "size": len(ZIP)} | override.get("zip", {})
    path.write_text(f"""
[[model]]
name = "test-voice"
kind = "tts"
license = "MIT"
install = "file"
entry = "voice.onnx"

[[model.file]]
url = "{voice.get('url', srv.url('voice.onnx'))}"
sha256 = "{voice['sha256']}"
size = {voice['size']}

[[model.file]]
url = "{srv.url('voice.onnx.json')}"
sha256 = "{sha(CONFIG)}"
size = {len(CONFIG)}

[[model]]
name = "test-vosk"
kind = "asr"
license = "Apache-2.0"
install = "unzip"
entry = "."

[[model.file]]
url = "{srv.url('tiny.zip')}"
sha256 = "{archive['sha256']}"
size = {archive['size']}
""")
    return path


def run(*argv: str) -> tuple[int, str, str]:
    """Run ``hub models ARGV`` in-process: ``(exit code, stdout, stderr)``."""
    parser = argparse.ArgumentParser(prog="hub")
    add_models_parser(parser.add_subparsers(dest="command", required=True))
    out, err = io.StringIO(), io.StringIO()
    code = run_models(parser.parse_args(["models", *argv]), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def env(tmp_path, server):
    """(manifest path, models dir) for the test server."""
    return write_manifest(tmp_path / "m.toml", server), tmp_path / "models"


def listing(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.iterdir() if not p.name.endswith(".lock"))


def test_fetch_installs_two_files_and_verifies(env, server):
    manifest, dest = env
    code, out, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert out.strip() == str(dest / "test-voice" / "voice.onnx")
    assert installed_path("test-voice", dest) == dest / "test-voice" / "voice.onnx"
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG
    assert (dest / "test-voice" / "voice.onnx.json").read_bytes() == CONFIG
    assert listing(dest) == ["test-voice"]  # no .part, no temp folder
    meta = json.loads((dest / "test-voice" / "hub-model.json").read_text())
    assert meta["files"] == {"voice.onnx": sha(BIG), "voice.onnx.json": sha(CONFIG)}
    assert meta["verified"] is True
    assert "voice.onnx: downloading 0.3 MB\n" in err and "voice.onnx: done at 0.3 MB\n" in err
    assert run("verify", "--dest", str(dest))[:2] == (EXIT_OK, "test-voice: ok\n")


def test_fetch_unzips_with_top_folder_stripped(env):
    manifest, dest = env
    code, out, err = run("fetch", "test-vosk", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert installed_path("test-vosk", dest) == dest / "test-vosk"
    assert (dest / "test-vosk" / "am" / "final.mdl").read_bytes() == BIG[:70_000]
    assert listing(dest) == ["test-vosk"]  # the archive's .part is gone
    meta = json.loads((dest / "test-vosk" / "hub-model.json").read_text())
    assert meta["downloads"][0]["sha256"] == sha(ZIP)
    assert meta["files"] == {"am/final.mdl": sha(BIG[:70_000]),
                             "conf/model.conf": sha(b"--sample-frequency=16000\n")}


def test_wrong_sha256_installs_nothing(tmp_path, server):
    manifest = write_manifest(tmp_path / "m.toml", server, voice={"sha256": sha(b"other")})
    dest = tmp_path / "models"
    code, out, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_BAD_INPUT
    assert err.splitlines()[-1] == (f"hub models fetch: voice.onnx: sha256 {sha(BIG)} differs "
                                    f"from the manifest's {sha(b'other')}; nothing was installed")
    assert installed_path("test-voice", dest) is None
    assert listing(dest) == []


def test_wrong_size_is_refused_before_download(tmp_path, server):
    manifest = write_manifest(tmp_path / "m.toml", server, voice={"size": len(BIG) + 1})
    dest = tmp_path / "models"
    code, _, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_BAD_INPUT
    assert f"offers {len(BIG)} bytes for voice.onnx; the manifest says {len(BIG) + 1}" in err
    assert listing(dest) == []


def test_interrupted_download_keeps_part_and_resumes_with_range(env, server):
    manifest, dest = env
    server.cut_after = 100_000
    args = ("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    code, _, err = run(*args)
    assert code == EXIT_NETWORK
    assert err.splitlines()[-1] == (
        f"hub models fetch: download of voice.onnx from 127.0.0.1:{server.httpd.server_port} "
        f"stopped at 100000 of {len(BIG)} bytes: the connection closed early; run the same "
        "command again to resume")
    assert listing(dest) == ["voice.onnx.part"]
    assert (dest / "voice.onnx.part").read_bytes() == BIG[:100_000]
    code, _, err = run(*args)
    assert code == EXIT_OK, err
    assert ("/voice.onnx", "bytes=100000-") in server.requests
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG
    assert listing(dest) == ["test-voice"]


def test_resume_keeps_its_range_across_a_redirect(tmp_path, server):
    manifest = write_manifest(tmp_path / "m.toml", server,
                              voice={"url": server.url("moved/voice.onnx")})
    dest = tmp_path / "models"
    server.cut_after = 70_000
    args = ("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert run(*args)[0] == EXIT_NETWORK
    code, _, err = run(*args)
    assert code == EXIT_OK, err
    assert server.requests[2:4] == [("/moved/voice.onnx", "bytes=70000-"),
                                    ("/voice.onnx", "bytes=70000-")]
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG


def test_server_without_range_restarts_cleanly(env, server):
    manifest, dest = env
    server.ranges = False
    server.cut_after = 100_000
    args = ("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert run(*args)[0] == EXIT_NETWORK
    code, _, err = run(*args)
    assert code == EXIT_OK, err
    assert server.requests[:2] == [("/voice.onnx", None), ("/voice.onnx", "bytes=100000-")]
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG


def test_corrupt_part_is_downloaded_again_from_the_start(env, server):
    manifest, dest = env
    dest.mkdir()
    (dest / "voice.onnx.part").write_bytes(b"\0" * 50_000)  # right length prefix, wrong bytes
    code, _, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert "voice.onnx: the resumed download does not match its sha256" in err
    assert server.requests[:2] == [("/voice.onnx", "bytes=50000-"), ("/voice.onnx", None)]
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG


def test_part_longer_than_the_file_is_discarded(env, server):
    manifest, dest = env
    dest.mkdir()
    (dest / "voice.onnx.part").write_bytes(BIG + b"junk")
    code, _, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert server.requests[0] == ("/voice.onnx", None)


def test_range_not_satisfiable_restarts(tmp_path, server):
    manifest = write_manifest(tmp_path / "m.toml", server, voice={"size": 0})  # size unknown
    dest = tmp_path / "models"
    dest.mkdir()
    (dest / "voice.onnx.part").write_bytes(BIG + b"x")
    code, _, err = run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert server.requests[:2] == [("/voice.onnx", f"bytes={len(BIG) + 1}-"), ("/voice.onnx", None)]
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_host_is_one_line_and_exit_3(tmp_path):
    port = free_port()
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[[model]]\nname = "x"\nkind = "llm"\ninstall = "file"\n'
                        f'entry = "x.gguf"\n[[model.file]]\nurl = "http://127.0.0.1:{port}/x.gguf"'
                        f'\nsha256 = "{sha(b"x")}"\nsize = 1\n')
    dest = tmp_path / "models"
    proc = subprocess.run([sys.executable, "-m", "hub", "models", "fetch", "x", "--dest", str(dest),
                           "--manifest", str(manifest)], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == EXIT_NETWORK
    assert proc.stdout == ""
    assert proc.stderr == (
        f"hub models fetch: cannot reach http://127.0.0.1:{port}/x.gguf: connection refused; "
        f"models can also be copied by hand into {dest}: download x.gguf elsewhere, put them "
        "in a folder and run `hub models fetch x --from FOLDER`\n")
    assert sorted(p.name for p in dest.iterdir()) == []  # no .lock, no .part of nothing


def test_fetch_from_a_folder_copied_by_hand(env, server, tmp_path):
    manifest, dest = env
    hand = tmp_path / "usb"
    hand.mkdir()
    (hand / "voice.onnx").write_bytes(BIG)
    (hand / "voice.onnx.json").write_bytes(CONFIG)
    code, _, err = run("fetch", "test-voice", "--from", str(hand), "--dest", str(dest),
                       "--manifest", str(manifest))
    assert code == EXIT_OK, err
    assert server.requests == []
    assert (dest / "test-voice" / "voice.onnx").read_bytes() == BIG


def test_verify_detects_a_corrupted_file(env):
    manifest, dest = env
    assert run("fetch", "test-vosk", "--dest", str(dest), "--manifest", str(manifest))[0] == 0
    model = dest / "test-vosk" / "am" / "final.mdl"
    model.write_bytes(b"X" + model.read_bytes()[1:])
    (dest / "test-vosk" / "conf" / "model.conf").unlink()
    code, out, _ = run("verify", "test-vosk", "--dest", str(dest))
    assert code == EXIT_BAD_INPUT
    assert out == ("test-vosk: corrupt: am/final.mdl: sha256 mismatch; conf/model.conf: missing;"
                   " `hub models fetch test-vosk` installs it again\n")
    code, _, err = run("fetch", "test-vosk", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK and "installed but corrupt" in err
    assert run("verify", "test-vosk", "--dest", str(dest))[:2] == (EXIT_OK, "test-vosk: ok\n")


def test_fetch_of_an_intact_model_downloads_nothing(env, server):
    manifest, dest = env
    args = ("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    assert run(*args)[0] == EXIT_OK
    count = len(server.requests)
    code, out, err = run(*args)
    assert (code, len(server.requests)) == (EXIT_OK, count)
    assert "already installed and intact" in err


def test_unknown_sha256_needs_no_verify(tmp_path, server):
    manifest = write_manifest(tmp_path / "m.toml", server, voice={"sha256": "unknown"})
    dest = tmp_path / "models"
    args = ("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    code, _, err = run(*args)
    assert code == EXIT_BAD_INPUT
    assert err == ("hub models fetch: the manifest has no sha256 for voice.onnx; refusing to "
                   "install test-voice unverified (--no-verify installs it anyway)\n")
    assert server.requests == []
    assert run(*args, "--no-verify")[0] == EXIT_OK
    assert run("verify", "--dest", str(dest))[1] == "test-voice: ok (installed with --no-verify)\n"


def test_list_shows_installed_partial_and_missing(env, server):
    manifest, dest = env
    server.cut_after = 1000
    run("fetch", "test-voice", "--dest", str(dest), "--manifest", str(manifest))
    run("fetch", "test-vosk", "--dest", str(dest), "--manifest", str(manifest))
    code, out, _ = run("list", "--dest", str(dest), "--manifest", str(manifest))
    assert code == EXIT_OK
    rows = [re.split(r" {2,}", line) for line in out.splitlines()]
    assert rows == [["NAME", "KIND", "SIZE", "LICENSE", "INSTALLED"],
                    ["test-voice", "tts", "0.3 MB", "MIT", "partial: 0.0 MB of 0.3 MB"],
                    ["test-vosk", "asr", f"{len(ZIP) / 1e6:.1f} MB", "Apache-2.0",
                     str(dest / "test-vosk")]]


def test_unknown_name_and_bad_manifest_are_bad_input(tmp_path, env):
    manifest, dest = env
    code, _, err = run("fetch", "nope", "--dest", str(dest), "--manifest", str(manifest))
    assert (code, err) == (EXIT_BAD_INPUT, "hub models fetch: no model named 'nope'; known: "
                                           "test-voice, test-vosk\n")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[model]]\nname = "a"\nkind = "asr"\ninstall = "copy"\n')
    assert run("list", "--manifest", str(bad))[2] == (
        f"hub models list: {bad}: model[0].install: expected one of unzip, file\n")


def test_packaged_manifest_entries():
    models = load_manifest()
    assert list(models) == ["vosk-en-small", "qwen2.5-0.5b-instruct", "en_US-lessac-medium"]
    vosk, qwen, piper = models.values()
    assert (vosk.kind, vosk.install, vosk.entry, vosk.size) == ("asr", "unzip", ".", 41205931)
    assert vosk.files[0].filename == "vosk-model-small-en-us-0.15.zip"
    assert vosk.files[0].sha256 == \
        "30f26242c4eb449f948e42cb302dd7a686cb29a3423a8367f99ff41780942498"
    assert (qwen.kind, qwen.entry, qwen.size) == ("llm", "qwen2.5-0.5b-instruct-q4_k_m.gguf",
                                                  491400032)
    assert qwen.files[0].sha256 == \
        "74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db"
    assert [f.filename for f in piper.files] == ["en_US-lessac-medium.onnx",
                                                 "en_US-lessac-medium.onnx.json"]
    assert [f.size for f in piper.files] == [63201294, 4885]
    assert (REPO / "models" / "manifest.toml").resolve() == \
        (REPO / "hub" / "data" / "models.toml").resolve()


def test_manifest_rejects_unknown_keys(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[[model]]\nname = "a"\nkind = "asr"\ninstall = "file"\n[[model.file]]\n'
                    'url = "https://example.org/a"\nsha256 = "unknown"\nmd5 = "x"\n')
    with pytest.raises(ConfigError, match=r"model\[0\]\.file\[0\]\.md5: unknown key"):
        load_manifest(path)


def test_models_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("HUB_MODELS_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert models_dir() == tmp_path / "xdg" / "hub" / "models"
    monkeypatch.setenv("HUB_MODELS_DIR", str(tmp_path / "m"))
    assert models_dir() == tmp_path / "m"
    assert installed_path("vosk-en-small") is None


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_draws_a_bar_to_the_end():
    stream = FakeTty()
    progress = Progress("x.bin", 2_000_000, done=500_000, stream=stream)
    progress.update(500_000)
    progress.update(1_000_000)
    progress.close()
    text = stream.getvalue()
    last = text.rstrip("\n").split("\r")[-1]
    assert last.startswith("x.bin: 100%") and "2.00M/2.00M" in last and "done" in last
    assert progress.done == 2_000_000
