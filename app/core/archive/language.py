"""Guessing the language of a short query from its function words and spelling.

A deterministic, dependency-free detector for the languages an archive in Catalonia and Spain
meets most: Catalan, Spanish, English, French, Portuguese, Italian and German. Each word of the
query that is a function word of some languages gives those languages one point, shared between
them (``de`` counts a little for five languages, ``quan`` fully for Catalan); a few spellings
that only one language uses (``ny`` and ``l'`` in Catalan, ``ñ`` and ``-ción`` in Spanish…) add
half a point. The guess is given only when the evidence is clear — at least
:data:`MIN_EVIDENCE` points and :data:`MIN_MARGIN` more than the runner-up — so an entity query
such as "Hugh Downs" or "Los Angeles" gets no language and is ranked language-neutrally.

Languages are named with Dédalo codes (``lg-cat``, ``lg-spa``, ``lg-eng``…), as chunks are.
"""

from __future__ import annotations

import functools
import re

NEUTRAL = "lg-nolan"
"""Dédalo's code for language-neutral values (dates, numbers, codes)."""

MIN_EVIDENCE = 1.5
MIN_MARGIN = 0.75


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "lg-cat": _words(
        "el els la les un una uns unes de del dels al als en i o que qui què quan on com per "
        "pel pels amb sense sobre entre fins cap des va van vam vaig vas vàreu és són era eren "
        "ha han hem heu havia haver hi ho li ens us nos seu seva seus seves meu meva nostre "
        "nostra aquest aquesta aquells aquelles això allò també però perquè molt més quin quina "
        "quins quines dins sota aquí allà"
    ),
    "lg-spa": _words(
        "el los la las un una unos unas de del al en y e o u que quien quién qué cuando cuándo "
        "donde dónde como cómo por para con sin sobre entre hasta desde fue fueron era eran es "
        "son está están ha han hemos había haber hay lo le les nos se su sus mi mis nuestro "
        "nuestra este esta estos estas eso ese esa también pero porque muy más cual cuál "
        "tuvieron tuvimos tuvo dentro bajo aquí allí"
    ),
    "lg-eng": _words(
        "the a an of and or to in on at by for from with without about into over under after "
        "before between who whom whose which what when where why how that this these those it "
        "its is are was were be been being had has have having do does did not no their there "
        "they them he she his her we our you your i my me us also but because very more than "
        "away"
    ),
    "lg-fra": _words(
        "le la les un une des de du au aux en et ou que qui quoi quand où comment pour par avec "
        "sans sur entre jusqu depuis est sont était étaient a ont avait avoir il elle ils "
        "elles nous vous leur leurs son sa ses mon ma mes notre ce cette ces aussi mais parce "
        "très plus dans sous"
    ),
    "lg-por": _words(
        "o os a as um uma uns umas de do da dos das ao aos e ou que quem quando onde como por "
        "para com sem sobre entre até desde foi foram era eram é são está estão tem têm havia "
        "ele ela eles elas nós seu sua seus suas meu minha nosso nossa este esta isso também "
        "mas porque muito mais no na nos nas pelo pela"
    ),
    "lg-ita": _words(
        "il lo la i gli le un uno una di del della dei degli delle al alla ai e o che chi "
        "quando dove come per con senza su tra fra fino da dal dalla è sono era erano ha hanno "
        "aveva avere egli lei loro noi voi suo sua suoi sue mio mia nostro nostra questo "
        "questa anche ma perché molto più nel nella"
    ),
    "lg-deu": _words(
        "der die das den dem des ein eine einen einem einer und oder dass wer was wann wo wie "
        "warum für mit ohne über unter zwischen bis seit ist sind war waren hat haben hatte "
        "hatten er sie es wir ihr sein seine ihre mein meine unser dieser diese dieses auch "
        "aber weil sehr mehr nicht im am zum zur von zu auf aus"
    ),
}

SPELLINGS: dict[str, tuple[str, ...]] = {
    "lg-cat": (r"\w+ny\b", r"\b[ldsmn]['’]\w", r"\w['’](?:l|ls|n|s|m|t|ns)\b", r"l·l", r"\w+ció\b"),
    "lg-spa": (r"ñ", r"\w+ción\b", r"\w+ciones\b", r"¿|¡", r"\w+aron\b"),
    "lg-eng": (r"\w+ing\b", r"\bth\w+", r"\w+'s\b", r"\w+ed\b"),
    # no "-tion": English shares it (infection, nation), and alone it leaned English to French
    "lg-fra": (r"\w+eaux?\b", r"ç", r"\b(?:qu|[ldjcn])['’]\w", r"\w+ait\b"),
    "lg-por": (r"ã|õ", r"\w+ção\b", r"\w+ções\b", r"\blh|nh\w"),
    "lg-ita": (r"\w+zione\b", r"\w+zioni\b", r"\bgli\b", r"\w+mente\b"),
    "lg-deu": (r"ß|ä|ö|ü", r"\bsch\w+", r"\w+ung\b", r"\w+keit\b"),
}

_WORD = re.compile(r"\w+", re.UNICODE)
_COMPILED = {lang: tuple(re.compile(p) for p in pats) for lang, pats in SPELLINGS.items()}


def _shares() -> dict[str, tuple[tuple[str, float], ...]]:
    """Each function word's points: ``(language, 1 / number of languages that use it)``."""
    owners: dict[str, list[str]] = {}
    for lang, words in FUNCTION_WORDS.items():
        for word in words:
            owners.setdefault(word, []).append(lang)
    return {w: tuple((lang, 1.0 / len(langs)) for lang in langs) for w, langs in owners.items()}


_SHARES = _shares()


def scores(text: str) -> dict[str, float]:
    """Evidence for each language (function-word points plus spelling half-points)."""
    lowered = text.lower()
    points = dict.fromkeys(FUNCTION_WORDS, 0.0)
    for word in _WORD.findall(lowered.replace("’", "'").replace("'", " ")):
        for lang, share in _SHARES.get(word, ()):
            points[lang] += share
    for lang, patterns in _COMPILED.items():
        points[lang] += 0.5 * sum(1 for p in patterns if p.search(lowered))
    return points


def detect(text: str) -> str | None:
    """The Dédalo code of ``text``'s language, or ``None`` when the evidence is not clear.

    Example:
        >>> detect("quan l'aigua va cobrir el poble")
        'lg-cat'
        >>> detect("Hugh Downs") is None
        True
    """
    ranked = sorted(scores(text).items(), key=lambda item: -item[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < MIN_EVIDENCE or top - second < MIN_MARGIN:
        return None
    return best


def lean(text: str) -> str | None:
    """The likeliest language of ``text`` even on thin evidence (``un castell``: one shared
    function word), English winning ties; ``None`` without any evidence (names).

    Used only to weigh the embedding models, where a wrong guess costs little: a short
    Catalan or Spanish query that :func:`detect` leaves undecided is still better served by
    the multilingual model than by the English one.
    """
    points = scores(text)
    best = max(points.values())
    if best <= 0:
        return None
    if points["lg-eng"] >= best:
        return "lg-eng"
    return max(points, key=lambda lang: points[lang])


GUESS_CHARS = 1500
"""How much of a text the import guess reads (the evidence is clear long before)."""
IMPORT_LANGS = ("lg-cat", "lg-spa", "lg-eng", "lg-fra")
"""The languages an importer guesses among for untagged text (the sources here hold these)."""


@functools.lru_cache(maxsize=16384)
def guess_import_lang(text: str) -> str | None:
    """The language of an untagged imported text among :data:`IMPORT_LANGS`, or ``None``.

    Longer than a query, so the evidence is summed over the whole text; the same thresholds as
    :func:`detect` apply. Importers store the guess with ``lang_guessed: True`` on the value.
    Cached: imports repeat the same values (types, places, formats) many times.

    Example:
        >>> guess_import_lang("Copie de 157 lettres de Ludovic Vitet à sa mère et à ses amis")
        'lg-fra'
    """
    points = scores(text[:GUESS_CHARS])
    ranked = sorted(((points[lang], lang) for lang in IMPORT_LANGS), reverse=True)
    (top, best), (second, _) = ranked[0], ranked[1]
    if top < MIN_EVIDENCE or top - second < MIN_MARGIN:
        return None
    return best
