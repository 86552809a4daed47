"""Where every data set the loaders know can be fetched from: URL, pinned SHA-256, licence, layout.

``drga download NAME`` (drga/data/download.py) fetches the files of :data:`SOURCES` ``[NAME]``,
checks each against its SHA-256 before anything is unpacked, and arranges them into the folder
the loaders search (``<data root>/<folder>/``). This module is the table only: plain data, no I/O.

Every file has a SHA-256, and each one says where it comes from. "Published" means a third
party printed it for that URL (a dataset library's checksum file); "git blob" means it was
computed here from the public repository's own objects at the commit pinned in the URL (a
GitHub raw URL at a commit serves exactly that blob, so the bytes cannot change under it).
A file for which neither exists is not in the table: ``drga download`` never fetches unchecked
bytes. All of these checksums were worked out on a machine that could not reach the hosts
themselves, so the real transfers are untested (docs/data.md).

The Pang & Lee sets (MR, SUBJ, the movie-review documents) come from NLTK's redistribution,
made with the authors' permission under CC BY 4.0: UTF-8 (the Cornell tarballs are ISO-8859-1,
and no checksum of them is published), and byte-identical to the copies every MR, SUBJ and
movie-reviews result in this repository was trained on.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RemoteFile:
    """One file to fetch, and what to do with it once its SHA-256 matches."""

    url: str
    sha256: str
    size: int  #: bytes
    checksum_source: str  #: where the SHA-256 comes from
    #: For a zip archive: the folder inside it whose contents land in the data set's folder
    #: ("" for its top level). None: the file lands as it is, under its own name.
    unpack: str | None = None

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DataSource:
    """A data set (or vector set) as ``drga download`` fetches it."""

    name: str  #: ``drga download NAME``
    folder: str  #: its folder under a data root, where the loaders look
    title: str
    licence: str
    homepage: str
    files: tuple[RemoteFile, ...]
    #: What the folder holds once arranged (paths relative to it; a folder for pos/ and neg/).
    produces: tuple[str, ...]
    #: The ``--dataset`` names (or ``network.vectors`` names) it serves.
    provides: tuple[str, ...]
    #: The least the loaders need (AG News reads test.csv alone); default: all of ``produces``.
    minimum: tuple[str, ...] = field(default=())
    note: str = ""  #: what differs from the copy the results in this repository used, if anything

    @property
    def required(self) -> tuple[str, ...]:
        return self.minimum or self.produces

    @property
    def size(self) -> int:
        return sum(remote.size for remote in self.files)


_NLTK = "https://raw.githubusercontent.com/nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28/packages/corpora"
_NLTK_SOURCE = "git blob of nltk/nltk_data at 5db857e; its MD5 {md5} is the one NLTK publishes in index.xml"
_PANG_LEE = "http://www.cs.cornell.edu/people/pabo/movie-review-data/"
_CC_BY = "CC BY 4.0 (Bo Pang and Lillian Lee; NLTK redistributes it with their permission)"
_ABSA = "https://raw.githubusercontent.com/songyouwei/ABSA-PyTorch/9a7c6c1c993ad772d5f439d32af4899b6698ea67/datasets/semeval14"
_ASGCN = "https://raw.githubusercontent.com/GeneZC/ASGCN/02783d78899ac106d125dd1e3d7fd4c4ae069c59/datasets"
_SEMEVAL_TERMS = "no licence file with the data; the SemEval task organisers' terms apply (research use)"
_MULTI30K = "https://raw.githubusercontent.com/multi30k/dataset/a3d2e0d26b56f3846f66a952536ffed4e401d05a/data/task1/raw"
_AG_NEWS = "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/555590db4219b1243abb1918effd6a7425a2d75f/data/ag_news_csv"
_HF_AG_NEWS = "published by Hugging Face datasets, datasets/ag_news/dataset_infos.json"
_GLOVE_SOURCE = "published by torchtext (torchtext/experimental/vectors.py, CHECKSUMS_GLOVE) and JuliaText/Embeddings.jl (src/glove.jl)"


def _git_blob(repository: str, commit: str) -> str:
    return f"git blob of {repository} at {commit[:7]} (the commit in the URL)"


_SOURCE_LIST: tuple[DataSource, ...] = (
    DataSource(
        name="mr",
        folder="mr",
        title="Movie Review sentence polarity v1.0 (Pang & Lee 2005)",
        licence=_CC_BY,
        homepage=_PANG_LEE,
        files=(
            RemoteFile(
                f"{_NLTK}/sentence_polarity.zip",
                "6e1ed4405b65c7eabf1d199a7f7c437091ac21da0ea7467b410a74062574566b",
                490_256,
                _NLTK_SOURCE.format(md5="5cdc0cae7f558040d050c90eb2b72e97"),
                unpack="sentence_polarity",
            ),
        ),
        produces=("rt-polarity.neg", "rt-polarity.pos"),
        provides=("mr", "planted-mr"),
    ),
    DataSource(
        name="subj",
        folder="subj",
        title="Subjectivity v1.0 (Pang & Lee 2004)",
        licence=_CC_BY,
        homepage=_PANG_LEE,
        files=(
            RemoteFile(
                f"{_NLTK}/subjectivity.zip",
                "741f3371e1a4375051b874fd82fd55857b90975473c91c19a3101cbe17fc4d8c",
                521_628,
                _NLTK_SOURCE.format(md5="a81a44513903ba6bb86f85aeff149561"),
                unpack="subjectivity",
            ),
        ),
        produces=("plot.tok.gt9.5000", "quote.tok.gt9.5000"),
        provides=("subj", "planted-subj"),
    ),
    DataSource(
        name="sst",
        folder="sst",
        title="Stanford Sentiment Treebank, PTB trees (Socher et al. 2013)",
        licence="none stated by the authors (Stanford NLP); cite Socher et al. 2013",
        homepage="https://nlp.stanford.edu/sentiment/",
        files=(
            RemoteFile(
                "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip",
                "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc",
                789_539,
                "published by Hugging Face datasets, datasets/sst/dataset_infos.json",
                unpack="trees",
            ),
        ),
        produces=("train.txt", "dev.txt", "test.txt"),
        provides=("sst", "sst2"),
        note="train.txt holds the official 8,544 trees; the copy the results used has 8,543 (see docs/data.md)",
    ),
    DataSource(
        name="ag-news",
        folder="ag_news",
        title="AG News topic classification (Zhang et al. 2015), train.csv + test.csv",
        licence="non-commercial research use (the AG corpus terms, in the data set's readme)",
        homepage="http://groups.di.unipi.it/~gulli/AG_corpus_of_news_articles.html",
        files=(
            RemoteFile(
                f"{_AG_NEWS}/train.csv",
                "76a0a2d2f92b286371fe4d4044640910a04a803fdd2538e0f3f29a5c6f6b672e",
                29_470_338,
                _HF_AG_NEWS,
            ),
            RemoteFile(
                f"{_AG_NEWS}/test.csv",
                "521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
                1_857_427,
                _HF_AG_NEWS + "; the git blob at 555590d agrees",
            ),
        ),
        produces=("train.csv", "test.csv"),
        provides=("ag-news",),
        minimum=("test.csv",),
        note="test.csv differs from the copy the results used in one row (5: 'smog-fighting' vs 'smogfighting')",
    ),
    DataSource(
        name="semeval14",
        folder="semeval14",
        title="SemEval-2014 Task 4 aspect terms, laptop + restaurant, in the $T$ format of ABSA-PyTorch",
        licence=_SEMEVAL_TERMS,
        homepage="https://alt.qcri.org/semeval2014/task4/",
        files=tuple(
            RemoteFile(f"{_ABSA}/{name}", sha256, size, _git_blob("songyouwei/ABSA-PyTorch", "9a7c6c1c993ad772d5f439d32af4899b6698ea67"))
            for name, sha256, size in (
                ("Laptops_Train.xml.seg", "fcc7574e20bc5af850d643ecaacf8f675a7c6b7979923ac5a0d571f237398a67", 271_591),
                ("Laptops_Test_Gold.xml.seg", "991c33cac376ac571564006b23e525132871fa70535992a22bda38574768ae0c", 61_851),
                ("Restaurants_Train.xml.seg", "179e03965ad30f9c6348b5eb3ea0f285fd6952c7914489c5539ed65ffef5c66a", 386_645),
                ("Restaurants_Test_Gold.xml.seg", "9492e95146e4f650da5109a2a2da4ae9e3f2440b7fccadac2100b3c2bd9dee0a", 115_810),
            )
        ),
        produces=("Laptops_Train.xml.seg", "Laptops_Test_Gold.xml.seg", "Restaurants_Train.xml.seg", "Restaurants_Test_Gold.xml.seg"),
        provides=("semeval14-laptop", "semeval14-restaurant"),
    ),
    DataSource(
        name="semeval15",
        folder="semeval15",
        title="SemEval-2015 Task 12 restaurant aspect terms, in the $T$ format of ASGCN",
        licence=_SEMEVAL_TERMS,
        homepage="https://alt.qcri.org/semeval2015/task12/",
        files=tuple(
            RemoteFile(f"{_ASGCN}/semeval15/{name}", sha256, size, _git_blob("GeneZC/ASGCN", "02783d78899ac106d125dd1e3d7fd4c4ae069c59"))
            for name, sha256, size in (
                ("restaurant_train.raw", "e825c313ff424a7490b01fc4eafc648dc360a2511c60c8239349fb7711dc21c9", 108_354),
                ("restaurant_test.raw", "f0f881e981b34b791a542e192d8ca241e3bd5e736f237a5e6bd82689bf2628ec", 51_914),
            )
        ),
        produces=("restaurant_train.raw", "restaurant_test.raw"),
        provides=("semeval15-restaurant",),
    ),
    DataSource(
        name="semeval16",
        folder="semeval16",
        title="SemEval-2016 Task 5 restaurant aspect terms, in the $T$ format of ASGCN",
        licence=_SEMEVAL_TERMS,
        homepage="https://alt.qcri.org/semeval2016/task5/",
        files=tuple(
            RemoteFile(f"{_ASGCN}/semeval16/{name}", sha256, size, _git_blob("GeneZC/ASGCN", "02783d78899ac106d125dd1e3d7fd4c4ae069c59"))
            for name, sha256, size in (
                ("restaurant_train.raw", "aa0c3eec532a101f7fac920c48608d61249011cf230803546ab4ac44a9f02194", 160_255),
                ("restaurant_test.raw", "8130723fd400bd7c8bbc91496a6d42464392de5805be1faf45d64f7d872647e1", 62_757),
            )
        ),
        produces=("restaurant_train.raw", "restaurant_test.raw"),
        provides=("semeval16-restaurant",),
    ),
    DataSource(
        name="movie-reviews",
        folder="movie_reviews",
        title="Polarity data set v2.0, 2,000 review documents (Pang & Lee 2004)",
        licence=_CC_BY,
        homepage=_PANG_LEE,
        files=(
            RemoteFile(
                f"{_NLTK}/movie_reviews.zip",
                "a41211ae685019137410268134db6a1a14428c89b671eb83056151a878539008",
                4_004_848,
                _NLTK_SOURCE.format(md5="155de2b77c6834dd8eea7cbe88e93acb"),
                unpack="movie_reviews",
            ),
        ),
        produces=("neg", "pos"),
        provides=("movie-reviews",),
    ),
    DataSource(
        name="multi30k",
        folder="multi30k",
        title="Multi30k task 1 English-German, train / val / test2016 (Elliott et al. 2016)",
        licence="no licence file; the README restricts use to non-commercial research and education (Flickr30K terms)",
        homepage="https://github.com/multi30k/dataset",
        files=tuple(
            RemoteFile(f"{_MULTI30K}/{name}", sha256, size, _git_blob("multi30k/dataset", "a3d2e0d26b56f3846f66a952536ffed4e401d05a"))
            for name, sha256, size in (
                ("train.en.gz", "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f", 568_929),
                ("train.de.gz", "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6", 637_044),
                ("val.en.gz", "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28", 21_650),
                ("val.de.gz", "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a", 24_681),
                ("test_2016_flickr.en.gz", "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9", 21_077),
                ("test_2016_flickr.de.gz", "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8", 22_890),
            )
        ),
        produces=("train.en.gz", "train.de.gz", "val.en.gz", "val.de.gz", "test_2016_flickr.en.gz", "test_2016_flickr.de.gz"),
        provides=("multi30k-en-de",),
    ),
    DataSource(
        name="glove-6b",
        folder="glove",
        title="GloVe 6B word vectors, 400,000 uncased words, 50/100/200/300-d (Pennington et al. 2014)",
        licence="PDDL 1.0",
        homepage="https://nlp.stanford.edu/projects/glove/",
        files=(
            RemoteFile(
                "https://nlp.stanford.edu/data/glove.6B.zip",
                "617afb2fe6cbd085c235baf7a465b96f4112bd7f7ccb2b2cbd649fed9cbcf2fb",
                862_182_613,
                _GLOVE_SOURCE,
                unpack="",
            ),
        ),
        produces=("glove.6B.50d.txt", "glove.6B.100d.txt", "glove.6B.200d.txt", "glove.6B.300d.txt"),
        provides=("glove-6b-50d", "glove-6b-100d", "glove-6b-200d", "glove-6b-300d"),
    ),
    DataSource(
        name="glove-840b",
        folder="glove",
        title="GloVe 840B word vectors, 2.2 million cased words, 300-d (Pennington et al. 2014)",
        licence="PDDL 1.0",
        homepage="https://nlp.stanford.edu/projects/glove/",
        files=(
            RemoteFile(
                "https://nlp.stanford.edu/data/glove.840B.300d.zip",
                "c06db255e65095393609f19a4cfca20bf3a71e20cc53e892aafa490347e3849f",
                2_176_768_927,
                _GLOVE_SOURCE,
                unpack="",
            ),
        ),
        produces=("glove.840B.300d.txt",),
        provides=("glove-840b-300d",),
    ),
)

#: ``drga download`` names → their sources.
SOURCES: dict[str, DataSource] = {source.name: source for source in _SOURCE_LIST}


def source_for(name: str) -> DataSource | None:
    """The source of a download name, a ``--dataset`` name or a vector name (sst2 → sst)."""
    if name in SOURCES:
        return SOURCES[name]
    return next((source for source in _SOURCE_LIST if name in source.provides), None)


def source_for_files(folder: str, names: tuple[str, ...] | list[str]) -> DataSource | None:
    """The source that fills ``folder`` with (one of) ``names``; a ``.gz`` name matches its unpacked form."""
    wanted = {name.removesuffix(".gz") for name in names} | set(names)
    candidates = [source for source in _SOURCE_LIST if source.folder == folder]
    matching = [source for source in candidates if wanted & set(source.produces)]
    chosen = matching or (candidates if len(candidates) == 1 else [])
    return chosen[0] if chosen else None
