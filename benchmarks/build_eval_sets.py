"""Build Arxiu's retrieval evaluation sets from ``shared/data`` as BEIR files.

Run ``python benchmarks/build_eval_sets.py [--out DIR]`` (default ``/tmp/arxiu-eval-sets``).
Every set is a folder with ``corpus.jsonl``, and one ``queries-<variant>.jsonl`` plus
``qrels-<variant>.tsv`` per query variant, for ``arxiu eval retrieval``::

    arxiu eval retrieval DIR/nomisma-am DIR/nomisma-am/queries-def-ca.jsonl \\
        DIR/nomisma-am/qrels-def-ca.tsv --workdir /tmp/arxiu-eval-work/nomisma-am

Sets (the data and the way each set is derived are described in ``docs/search.md``):

* ``nomisma-am``: nomisma.org concepts whose id starts with a–m (ids n–z are held out and never
  read), indexed with their ENGLISH label and definition only: the targets of the queries plus
  evenly spread distractors, 1,000 concepts. Variants: ``label-ca``,
  ``label-es`` (a Catalan / Spanish prefLabel that differs from the English one → the concept),
  ``def-ca``, ``def-es`` (a Catalan / Spanish definition → the concept, where nomisma has a
  parallel English definition).
* ``igch-mints``: every 4th IGCH hoard (title + entry text); a query asks for hoards with coins
  of one mint (a–m mints found in 5–80 of them), in English, Catalan and Spanish, with the
  mint's name in that language where nomisma has one; relevant: every hoard linked to that mint.
* ``tate-subjects``: every 40th Tate artwork (title, medium, date: the subject terms are NOT
  indexed); a query names a subject in English, Catalan or Spanish; relevant: the artworks
  Tate tagged with it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
OUT = Path("/tmp/arxiu-eval-sets")
MAX_LABEL_QUERIES = 100
NOMISMA_DOCS = 1000
"""Concepts in the corpus: every query's target plus evenly spread distractors (the whole
a–m set, 5,422 concepts, is within reach but takes too long to embed on two shared cores)."""
MAX_MINT_QUERIES = 60
TATE_EVERY = 40
IGCH_EVERY = 4

TATE_SUBJECTS: list[tuple[str, str, str, str]] = [
    ("castle", "a castle", "un castell", "un castillo"),
    ("bridge", "a bridge over a river", "un pont sobre un riu", "un puente sobre un río"),
    ("church", "a church", "una església", "una iglesia"),
    ("lake", "a lake", "un llac", "un lago"),
    ("cliff", "cliffs by the sea", "penya-segats vora el mar", "acantilados junto al mar"),
    ("horse", "a horse", "un cavall", "un caballo"),
    ("harbour", "boats in a harbour", "barques en un port", "barcas en un puerto"),
    ("ship, sailing", "a sailing ship", "un vaixell de vela", "un barco de vela"),
    ("cathedral", "a cathedral", "una catedral", "una catedral"),
    ("waterfall", "a waterfall", "una cascada", "una cascada"),
    ("storm", "a storm", "una tempesta", "una tormenta"),
    ("sunset", "the sun setting", "la posta de sol", "la puesta de sol"),
    ("sheep", "sheep in a field", "ovelles en un camp", "ovejas en un campo"),
    ("cow", "cows", "vaques", "vacas"),
    ("beach", "people on a beach", "gent a la platja", "gente en la playa"),
    ("garden", "a garden", "un jardí", "un jardín"),
    ("flower", "flowers", "flors", "flores"),
    ("dog - non-specific", "a dog", "un gos", "un perro"),
    ("self-portraits", "a self-portrait", "un autoretrat", "un autorretrato"),
    ("soldier", "soldiers", "soldats", "soldados"),
    ("night", "a scene at night", "una escena de nit", "una escena de noche"),
    ("crowd", "a crowd of people", "una multitud de gent", "una multitud de gente"),
    ("abbey", "a ruined abbey", "una abadia en ruïnes", "una abadía en ruinas"),
    ("mountain", "mountains", "muntanyes", "montañas"),
    ("canal", "a canal", "un canal", "un canal"),
    ("death", "death", "la mort", "la muerte"),
    ("music", "music and musicians", "música i músics", "música y músicos"),
    ("street", "a street in a town", "un carrer d'una ciutat", "una calle de una ciudad"),
]


def rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a gzipped JSONL file."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def fold(text: str) -> str:
    """Lower case without accents (to tell a translated label from a copied one)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"\W+", " ", plain).lower().strip()


def held_in(concept_id: str) -> bool:
    """Only nomisma ids starting with a–m may be used; n–z are held out."""
    return "a" <= concept_id[:1].lower() <= "m"


def write_set(folder: Path, corpus: list[dict[str, str]]) -> None:
    """Write ``corpus.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc in corpus:
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def write_variant(folder: Path, name: str, queries: list[tuple[str, str, list[str]]]) -> None:
    """Write ``queries-<name>.jsonl`` and ``qrels-<name>.tsv`` from (id, text, relevant ids)."""
    with (folder / f"queries-{name}.jsonl").open("w", encoding="utf-8") as out:
        for qid, text, _ in queries:
            out.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with (folder / f"qrels-{name}.tsv").open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for qid, _, relevant in queries:
            for doc in relevant:
                out.write(f"{qid}\t{doc}\t1\n")
    print(f"  {folder.name}/{name}: {len(queries)} queries")


def build_nomisma(out: Path) -> dict[str, dict[str, Any]]:
    """The a–m concept corpus (English only) and its four cross-lingual variants."""
    concepts = [c for c in rows(DATA / "nomisma" / "concepts.jsonl.gz") if held_in(c["id"])]
    concepts = [c for c in concepts if c["labels"].get("en")]
    variants: dict[str, list[tuple[str, str, list[str]]]] = {}
    for lang in ("ca", "es"):
        labelled = [
            (f"{c['id']}-l{lang}", c["labels"][lang], [c["id"]])
            for c in concepts
            if c["labels"].get(lang) and fold(c["labels"][lang]) != fold(c["labels"]["en"])
        ]
        step = max(1, len(labelled) // MAX_LABEL_QUERIES)
        variants[f"label-{lang}"] = labelled[::step][:MAX_LABEL_QUERIES]
        variants[f"def-{lang}"] = [
            (f"{c['id']}-d{lang}", c["definitions"][lang], [c["id"]])
            for c in concepts
            if c["definitions"].get(lang) and c["definitions"].get("en")
        ]
    targets = {doc for queries in variants.values() for _, _, docs in queries for doc in docs}
    others = [c for c in concepts if c["id"] not in targets]
    step = max(1, len(others) // max(1, NOMISMA_DOCS - len(targets)))
    keep = targets | {c["id"] for c in others[::step][: max(0, NOMISMA_DOCS - len(targets))]}
    folder = out / "nomisma-am"
    write_set(
        folder,
        [
            {"_id": c["id"], "title": c["labels"]["en"], "text": c["definitions"].get("en", "")}
            for c in concepts
            if c["id"] in keep
        ],
    )
    for name, queries in variants.items():
        write_variant(folder, name, queries)
    return {c["id"]: c for c in concepts}


def mint_query(lang: str, name: str) -> str:
    """ "Hoards with coins of NAME" in ``lang``."""
    if lang == "ca":
        return (
            f"tresors amb monedes d'{name}"
            if fold(name)[:1] in "aeiouh"
            else (f"tresors amb monedes de {name}")
        )
    if lang == "es":
        return f"tesoros con monedas de {name}"
    return f"hoards with coins of {name}"


def build_igch(out: Path, concepts: dict[str, dict[str, Any]]) -> None:
    """Hoards, and mint queries in three languages."""
    hoards = list(rows(DATA / "igch" / "hoards.jsonl.gz"))[::IGCH_EVERY]
    write_set(
        out / "igch-mints",
        [{"_id": h["id"], "title": h["title"], "text": h["text"]} for h in hoards],
    )
    counts = Counter(m for h in hoards for m in set(h["mints"]))
    mints = sorted(m for m, n in counts.items() if 5 <= n <= 80 and m in concepts)
    step = max(1, len(mints) // MAX_MINT_QUERIES)
    chosen = mints[::step][:MAX_MINT_QUERIES]
    for lang in ("en", "ca", "es"):
        queries = []
        for mint in chosen:
            labels = concepts[mint]["labels"]
            name = labels.get(lang) or labels["en"]
            relevant = [h["id"] for h in hoards if mint in h["mints"]]
            queries.append((f"{mint}-{lang}", mint_query(lang, name), relevant))
        write_variant(out / "igch-mints", lang, queries)


def build_tate(out: Path) -> None:
    """A sample of artworks without their subjects, and subject queries in three languages."""
    works = [
        w for i, w in enumerate(rows(DATA / "tate" / "artworks.jsonl.gz")) if not i % TATE_EVERY
    ]
    folder = out / "tate-subjects"
    write_set(
        folder,
        [
            {
                "_id": str(w["id"]),
                "title": w["title"] or "",
                "text": ". ".join(p for p in (w.get("medium"), w.get("date_text")) if p),
            }
            for w in works
        ],
    )
    for position, lang in enumerate(("en", "ca", "es"), start=1):
        queries = []
        for leaf, *texts in TATE_SUBJECTS:
            relevant = [
                str(w["id"]) for w in works if any(s.endswith(f"> {leaf}") for s in w["subjects"])
            ]
            if relevant:
                queries.append(
                    (f"{fold(leaf).replace(' ', '-')}-{lang}", texts[position - 1], relevant)
                )
        write_variant(folder, lang, queries)


def main() -> None:
    """Build every set under ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    print(f"writing evaluation sets under {args.out}")
    concepts = build_nomisma(args.out)
    build_igch(args.out, concepts)
    build_tate(args.out)


if __name__ == "__main__":
    main()
