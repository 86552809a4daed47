"""``drga download``: small files served from a real HTTP server on 127.0.0.1, never the internet.

The sources of drga/data/sources.py are pointed at the local server (their real URLs are not
reachable from the machine these tests were written on); each test makes its files in the real
layout of the archive it stands for (NLTK's zips, the GloVe zip, Multi30k's gzip'd text).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import io
import re
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from drga.cli import main
from drga.data import DATASETS, VECTOR_SETS, DataNotFoundError, load_dataset
from drga.data.download import DownloadError, download, fetch, resolve_names
from drga.data.embeddings import resolve_vectors
from drga.data.locate import BUNDLED_ROOT
from drga.data.sources import SOURCES, DataSource, source_for

# --------------------------------------------------------------------------- the local server


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[bytes, str]] = {}  # path → (body, "ok" | "truncated")

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path not in self.routes:
            self.send_error(404)
            return
        body, mode = self.routes[self.path]
        self.send_response(200)
        # a cut-off transfer: the header promises more than is sent before the connection closes
        self.send_header("Content-Length", str(len(body) + (1000 if mode == "truncated" else 0)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if mode == "truncated" else body)
        self.close_connection = True

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def server():
    routes: dict[str, tuple[bytes, str]] = {}
    handler = type("Handler", (_Handler,), {"routes": routes})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", routes
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def dead_url() -> str:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A data root in $DRGA_DATA and no other data anywhere the lookup searches."""
    import drga.data.locate as locate

    root = tmp_path / "data"
    monkeypatch.setenv("DRGA_DATA", str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setattr(locate, "_PROJECT_ROOT", tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    return root


# --------------------------------------------------------------------------- files in the real layouts


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def mr_zip(pos: int = 10, neg: int = 10) -> bytes:
    """NLTK's sentence_polarity.zip: sentence_polarity/rt-polarity.{pos,neg} and a README."""
    return zip_bytes(
        {
            "sentence_polarity/README.txt": b"Sentence Polarity Dataset 1.0\n",
            "sentence_polarity/rt-polarity.pos": "".join(f"a fine film number {i} , caf\u00e9\n" for i in range(pos)).encode(),
            "sentence_polarity/rt-polarity.neg": "".join(f"a dull film number {i}\n" for i in range(neg)).encode(),
        }
    )


def serve(base: str, routes: dict, source: DataSource, bodies: list[bytes], modes: list[str] | None = None, pin=None) -> DataSource:
    """``source`` with each file at ``base`` (same file name) and pinned to ``pin`` or the body's own SHA-256."""
    files = []
    for index, (remote, body) in enumerate(zip(source.files, bodies)):
        path = f"/{source.name}/{remote.filename}"
        routes[path] = (body, modes[index] if modes else "ok")
        sha256 = pin or hashlib.sha256(body).hexdigest()
        files.append(dataclasses.replace(remote, url=base + path, sha256=sha256, size=len(body)))
    return dataclasses.replace(source, files=tuple(files))


def leftovers(root: Path) -> list[str]:
    """Every file under ``root`` (empty folders do not count: no loader reads them)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


# --------------------------------------------------------------------------- right checksum


def test_right_checksum_lands_where_the_lookup_finds_it(server, isolated):
    base, routes = server
    source = serve(base, routes, SOURCES["mr"], [mr_zip(pos=10, neg=10)])
    folder = download(source)
    assert folder == isolated / "mr"
    # the archive's inner folder is unpacked into mr/, the zip itself is gone, no staging is left
    assert leftovers(isolated) == ["mr/README.txt", "mr/rt-polarity.neg", "mr/rt-polarity.pos"]
    data = load_dataset("mr")  # no --data-dir: found through $DRGA_DATA
    assert [len(data.train), len(data.dev), len(data.test)] == [16, 2, 2]  # 80/10/10 of 10 per class
    assert str(isolated / "mr") in data.notes[0]
    assert ["a", "fine", "film", "number", "0", ",", "caf\u00e9"] in [ex.tokens for ex in data.train + data.dev + data.test]


def test_plain_files_and_documents_and_vectors_land_in_their_layouts(server, isolated):
    base, routes = server
    pairs = {"train": 6, "val": 2, "test_2016_flickr": 2}
    multi30k = SOURCES["multi30k"]
    bodies = [
        gzip.compress("".join(f"{lang} sentence {i}\n" for i in range(pairs[r.filename.split(".")[0]])).encode())
        for r in multi30k.files
        for lang in [r.filename.split(".")[-2]]
    ]
    download(serve(base, routes, multi30k, bodies))
    translation = load_dataset("multi30k-en-de")
    assert [len(translation.train), len(translation.dev), len(translation.test)] == [6, 2, 2]

    reviews = {
        f"movie_reviews/{label}/cv{i:03d}_1.txt": f"the {label} film .\nreview {i} .\n".encode()
        for label in ("pos", "neg")
        for i in range(10)
    }
    download(serve(base, routes, SOURCES["movie-reviews"], [zip_bytes({"movie_reviews/README": b"v2.0\n", **reviews})]))
    documents = load_dataset("movie-reviews")
    assert len(documents.train) + len(documents.dev) + len(documents.test) == 20
    assert documents.train[0].extras["sentences"][1][0] == "review"

    rows = {dim: f"the {' '.join(['0.5'] * dim)}\n".encode() for dim in (50, 100, 200, 300)}
    glove = zip_bytes({f"glove.6B.{dim}d.txt": row for dim, row in rows.items()})
    download(serve(base, routes, SOURCES["glove-6b"], [glove]))
    path, dim = resolve_vectors("glove-6b-200d")
    assert (path, dim) == (isolated / "glove" / "glove.6B.200d.txt", 200)


def test_a_complete_data_set_is_not_fetched_again(isolated):
    folder = isolated / "subj"
    folder.mkdir(parents=True)
    for name in SOURCES["subj"].produces:
        (folder / name).write_text("one line\n")
    offline = dataclasses.replace(
        SOURCES["subj"], files=tuple(dataclasses.replace(r, url=dead_url() + "/x.zip") for r in SOURCES["subj"].files)
    )
    assert download(offline) == folder


# --------------------------------------------------------------------------- refusals


def test_wrong_checksum_is_refused_and_nothing_is_kept(server, isolated):
    base, routes = server
    body = mr_zip()
    source = serve(base, routes, SOURCES["mr"], [body], pin="0" * 64)
    with pytest.raises(DownloadError) as error:
        download(source)
    message = str(error.value)
    assert f"its SHA-256 is not the pinned {'0' * 64} (got {hashlib.sha256(body).hexdigest()})" in message
    assert "nothing was kept" in message and "\n" not in message
    assert leftovers(isolated) == []
    with pytest.raises(DataNotFoundError):
        load_dataset("mr")


def test_interrupted_transfer_is_refused_and_leaves_no_half_file(server, isolated):
    base, routes = server
    source = serve(base, routes, SOURCES["mr"], [mr_zip()], modes=["truncated"])
    with pytest.raises(DownloadError, match="the transfer was cut off before the end"):
        download(source)
    assert leftovers(isolated) == []
    with pytest.raises(DataNotFoundError):
        load_dataset("mr")


def test_server_down_names_the_url_and_the_folder_for_the_file(isolated):
    url = dead_url() + "/mr/sentence_polarity.zip"
    source = dataclasses.replace(SOURCES["mr"], files=(dataclasses.replace(SOURCES["mr"].files[0], url=url),))
    with pytest.raises(DownloadError) as error:
        download(source)
    message = str(error.value)
    assert f"could not fetch {url} (no connection to the host)" in message
    assert f"put the file in {isolated / 'downloads' / 'mr'}/ as sentence_polarity.zip" in message
    assert "drga download mr" in message
    assert leftovers(isolated) == []


def test_a_file_put_in_by_hand_is_checked_and_unpacked_without_the_network(isolated):
    body = mr_zip(pos=4, neg=4)
    remote = dataclasses.replace(SOURCES["mr"].files[0], url=dead_url() + "/sentence_polarity.zip", sha256=hashlib.sha256(body).hexdigest())
    inbox = isolated / "downloads" / "mr"
    inbox.mkdir(parents=True)
    (inbox / "sentence_polarity.zip").write_bytes(body)
    download(dataclasses.replace(SOURCES["mr"], files=(remote,)))
    assert len(load_dataset("mr").train) == 6  # 80% of 4 per class, rounded: 3 + 3
    assert not inbox.exists()  # the archive is removed once unpacked


def test_a_wrong_file_put_in_by_hand_is_refused(isolated):
    inbox = isolated / "downloads" / "mr"
    inbox.mkdir(parents=True)
    (inbox / "sentence_polarity.zip").write_bytes(b"not the archive")
    remote = dataclasses.replace(SOURCES["mr"].files[0], url=dead_url() + "/sentence_polarity.zip")
    found = hashlib.sha256(b"not the archive").hexdigest()
    with pytest.raises(DownloadError, match=re.escape(f"{inbox / 'sentence_polarity.zip'} has SHA-256 {found}, not the pinned")):
        fetch("mr", remote, inbox)


def test_files_the_loader_cannot_read_are_not_put_in_place(server, isolated):
    base, routes = server
    trees = zip_bytes({"trees/train.txt": b"(3 (2 good) (3 film)\n", "trees/dev.txt": b"(2 ok)\n", "trees/test.txt": b"(2 ok)\n"})
    with pytest.raises(DownloadError, match=r"do not read as 'sst' \(.*train\.txt:1: malformed tree"):
        download(serve(base, routes, SOURCES["sst"], [trees]))
    assert not (isolated / "sst").exists()
    assert [p for p in isolated.iterdir() if p.name.startswith(".partial")] == []


def test_an_archive_member_outside_its_folder_is_refused(server, isolated):
    base, routes = server
    evil = zip_bytes({"sentence_polarity/rt-polarity.pos": b"x\n", "sentence_polarity/../../escape.txt": b"x\n"})
    with pytest.raises(DownloadError, match="points outside its folder"):
        download(serve(base, routes, SOURCES["mr"], [evil]))
    assert not (isolated.parent / "escape.txt").exists() and not (isolated / "mr").exists()


# --------------------------------------------------------------------------- names, hints, the command line


def test_names_resolve_through_data_set_and_vector_names():
    assert [s.name for s in resolve_names(["sst2", "sst", "semeval14-laptop", "glove-6b-300d", "multi30k-en-de"])] == [
        "sst",
        "semeval14",
        "glove-6b",
        "multi30k",
    ]
    with pytest.raises(DownloadError, match="nothing to download for 'imdb'"):
        resolve_names(["imdb"])


def test_every_data_set_and_vector_set_has_a_pinned_source():
    fetchable = set(DATASETS) - {"tsv", "parallel"}
    assert {name for name in fetchable if source_for(name) is None} == set()
    shipped = {name for name, (subdir, filename, _) in VECTOR_SETS.items() if (BUNDLED_ROOT / subdir / filename).is_file()}
    assert shipped == {"glove-6b-50d-subj"}  # the demo's vectors come with the package: nothing to fetch
    assert {name for name in VECTOR_SETS if source_for(name) is None} == shipped
    for source in SOURCES.values():
        assert set(source.provides) <= set(DATASETS) | set(VECTOR_SETS)
        for remote in source.files:
            assert re.fullmatch(r"[0-9a-f]{64}", remote.sha256) and remote.url.startswith(("https://", "http://"))
            assert remote.size > 0 and remote.checksum_source


def test_missing_data_names_the_download_command(isolated):
    with pytest.raises(DataNotFoundError, match="Or fetch it: drga download sst$"):
        load_dataset("sst2")
    with pytest.raises(DataNotFoundError, match="drga download movie-reviews"):
        load_dataset("movie-reviews")
    with pytest.raises(DataNotFoundError, match=r"glove\.6B\.300d\.txt\.gz \(or glove\.6B\.300d\.txt\)(.|\n)*drga download glove-6b$"):
        resolve_vectors("glove-6b-300d")


def test_train_on_a_missing_data_set_names_the_download_command(isolated, capsys):
    assert main(["train", "--dataset", "mr", "--net", "lstm-sa", "--logdir", str(isolated.parent / "runs")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("drga train: error: data set 'mr' not found") and "drga download mr" in error


def test_datasets_command_shows_missing_then_found(server, isolated, capsys):
    assert main(["datasets"]) == 0
    assert "missing; get it with: drga download mr" in capsys.readouterr().out
    base, routes = server
    download(serve(base, routes, SOURCES["mr"], [mr_zip()]))
    assert main(["datasets"]) == 0
    assert f"found in {isolated / 'mr'}; get it with: drga download mr" in capsys.readouterr().out


def test_download_command_fetches_into_dir_and_lists(server, isolated, capsys, monkeypatch):
    base, routes = server
    monkeypatch.setitem(SOURCES, "subj", serve(base, routes, SOURCES["subj"], [zip_bytes({
        "subjectivity/plot.tok.gt9.5000": b"".join(b"the plot %d\n" % i for i in range(5)),
        "subjectivity/quote.tok.gt9.5000": b"".join(b"i loved it %d\n" % i for i in range(5)),
    })]))
    target = isolated.parent / "elsewhere"
    assert main(["download", "subj", "--dir", str(target)]) == 0
    assert leftovers(target) == ["subj/plot.tok.gt9.5000", "subj/quote.tok.gt9.5000"]
    assert main(["download", "--list"]) == 0
    listing = capsys.readouterr().out
    assert all(re.search(rf"^{re.escape(name)} ", listing, re.M) for name in SOURCES)
    assert main(["download", "imdb"]) == 2
