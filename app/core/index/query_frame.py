"""Stripping the question frame off a query: "Quines entrevistes parlen de …" → "…".

Archivists type questions, not keywords: "Quines entrevistes parlen de les famílies que van
haver de marxar?", "¿Qué entrevistas hablan de …?", "Which interviews talk about …?", "Hi ha
documents sobre …?". The frame names no topic, yet a sentence model reads it as part of the
meaning — and pulls up records that *talk about interviews* — and BM25 matches its words
("entrevistes", "parlen"). :func:`strip` removes one leading frame, in Catalan, Spanish or
English, and the question marks around it, so that only the topic is embedded and matched.

A frame is three parts, each from a short list per language (:data:`FRAMES`):

* an opening: a question word ("quines", "qué", "which"), "hi ha / hay / are there", or a
  request ("busca", "find", "show me");
* the kind of record asked for: "entrevistes / entrevistas / interviews", "documents",
  "registres", "testimonis", "fotografies", "records", "items"…;
* the link to the topic: a verb of "being about" ("parlen de", "tracten de", "hablan de",
  "talk about", "deal with", "mention") or a bare preposition ("sobre", "about", "on").

Either the opening or the link may be missing ("Entrevistes sobre el pantà", "Which
interviews mention the dam"), never both: "documents de l'arxiu" is a topic, not a frame.
The kinds are the documentary ones only: "letters", "photographs" or "coins" may well be
the topic ("Which coins of Athens show an owl?" is kept whole), and "of" / "de" never link.
Nothing else in the query is touched, and a query that would be left with fewer than
:data:`MIN_TOPIC_WORDS` words is kept whole.
"""

from __future__ import annotations

import re

MIN_TOPIC_WORDS = 1
"""A frame is only stripped when at least this many words of topic remain."""
_OF = r"(?!(?:of|from|by|de|del|dels|d['’]|desde)\b)"
"""After a kind with no link: "records of Elvis Presley" names its topic with the kind."""

_CA_KINDS = r"entrevist(?:a|es)|documents?|registres?|testimonis?|fitxes?|gravacions?|fonts?"
_ES_KINDS = (
    r"entrevistas?|documentos?|registros?|testimonios?|fichas?|grabaci(?:ón|on|ones)|fuentes?"
)
_EN_KINDS = r"interviews?|documents?|records?|testimon(?:y|ies)|files?|recordings?|items?|sources?"

FRAMES: dict[str, tuple[str, str, str, str]] = {
    "lg-cat": (
        r"(?:(?:quin(?:a|s|es)?|qu[èe]|alguna?|alguns|algunes|cap|tots?|totes)\s+"
        r"(?:les\s+|els\s+)?"
        r"|hi\s+ha\s+(?:algun(?:a|s|es)?\s+|cap\s+)?"
        r"|(?:busca|cerca|troba|mostra|llista)(?:['’]m|-me)?\s+(?:les\s+|els\s+)?)",
        _CA_KINDS,
        r"(?:que\s+)?(?:parl(?:a|en|in)|tract(?:a|en|in)|expliqu(?:i|in|en)|explica|"
        r"esment(?:a|en|in)|diu(?:en)?|recull(?:en)?|mencion(?:a|en|in))"
        r"(?:\s+(?:dels?|de|sobre|com)(?:\s+|$)|\s+d['’]|\s+)",
        r"(?:sobre|referents?\s+a)\s+",
    ),
    "lg-spa": (
        r"(?:(?:qu[ée]|cu[áa]les|alg[úu]n(?:a|os|as)?|todos?|todas)\s+(?:las\s+|los\s+)?"
        r"|hay\s+(?:alg[úu]n(?:a|os|as)?\s+)?"
        r"|(?:busca|encuentra|muestra|lista)(?:me)?\s+(?:las\s+|los\s+)?)",
        _ES_KINDS,
        r"(?:que\s+)?(?:habl(?:a|an|en)|trat(?:a|an|en)|cuent(?:a|an|en)|mencion(?:a|an|en)|"
        r"explic(?:a|an)|expliquen|dic(?:e|en)|recog(?:e|en))"
        r"(?:\s+(?:del?|sobre|c[óo]mo)(?:\s+|$)|\s+)",
        r"(?:sobre|acerca\s+de|referentes?\s+a)\s+",
    ),
    "lg-eng": (
        r"(?:(?:which|what|any|all(?:\s+the)?)\s+"
        r"|(?:are|is)\s+there\s+(?:any\s+)?"
        r"|(?:find|show|list|give|get)(?:\s+me)?\s+(?:all\s+)?(?:the\s+)?(?:any\s+)?)",
        _EN_KINDS,
        r"(?:that\s+|which\s+|do\s+|does\s+)?"
        r"(?:talks?|speaks?|tells?|deals?|mentions?|discuss(?:es)?|describes?|covers?|"
        r"refers?)(?:\s+(?:about|with|of|on|to)(?:\s+|$)|\s+)",
        r"(?:about|on|concerning|regarding)\s+",
    ),
}
"""Per language (Dédalo code): the opening, the kinds of record, the verb that links them to
the topic and the bare preposition that may stand for it (regexes)."""

_OPEN = re.compile(r"^[\s¿¡\"'“‘«]+")
_CLOSE = re.compile(r"[\s?!.\"'”’»]+$")


def _compile(opening: str, kinds: str, verb: str, about: str) -> tuple[re.Pattern[str], ...]:
    kind = rf"(?:{kinds})\b"
    return (
        re.compile(rf"^{opening}{kind}\s*(?:{verb}|{about})", re.IGNORECASE),
        re.compile(rf"^{opening}{kind}\s+{_OF}", re.IGNORECASE),
        re.compile(rf"^{kind}\s*(?:{verb}|{about})", re.IGNORECASE),
    )


_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    pattern for parts in FRAMES.values() for pattern in _compile(*parts)
)


def strip(query: str) -> str:
    """``query`` without its leading question frame and surrounding question marks.

    Returns the query unchanged (but for surrounding whitespace) when it has no frame or
    when stripping would leave fewer than :data:`MIN_TOPIC_WORDS` words.
    """
    text = _CLOSE.sub("", _OPEN.sub("", query))
    match = next((m for m in (p.match(text) for p in _PATTERNS) if m), None)
    topic = text[match.end() :].strip() if match else ""
    return topic if len(topic.split()) >= MIN_TOPIC_WORDS else query.strip()
