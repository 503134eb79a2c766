"""Language codes: ISO 639-1 (``en``, ``ca``) to the archive's form (``lg-eng``, ``lg-cat``)."""

from __future__ import annotations

from app.core.archive.model import NEUTRAL_LANG

# ISO 639-1 -> ISO 639-2/T (the three-letter code Dédalo's ``lg-xxx`` uses).
_PAIRS = """
aa:aar ab:abk af:afr ak:aka am:amh an:arg ar:ara as:asm av:ava ay:aym az:aze ba:bak be:bel
bg:bul bh:bih bi:bis bm:bam bn:ben bo:bod br:bre bs:bos ca:cat ce:che ch:cha co:cos cr:cre
cs:ces cu:chu cv:chv cy:cym da:dan de:deu dv:div dz:dzo ee:ewe el:ell en:eng eo:epo es:spa
et:est eu:eus fa:fas ff:ful fi:fin fj:fij fo:fao fr:fra fy:fry ga:gle gd:gla gl:glg gn:grn
gu:guj gv:glv ha:hau he:heb hi:hin ho:hmo hr:hrv ht:hat hu:hun hy:hye hz:her ia:ina id:ind
ie:ile ig:ibo ii:iii ik:ipk io:ido is:isl it:ita iu:iku ja:jpn jv:jav ka:kat kg:kon ki:kik
kj:kua kk:kaz kl:kal km:khm kn:kan ko:kor kr:kau ks:kas ku:kur kv:kom kw:cor ky:kir la:lat
lb:ltz lg:lug li:lim ln:lin lo:lao lt:lit lu:lub lv:lav mg:mlg mh:mah mi:mri mk:mkd ml:mal
mn:mon mo:mol mr:mar ms:msa mt:mlt my:mya na:nau nb:nob nd:nde ne:nep ng:ndo nl:nld nn:nno
no:nor nr:nbl nv:nav ny:nya oc:oci oj:oji om:orm or:ori os:oss pa:pan pi:pli pl:pol ps:pus
pt:por qu:que rm:roh rn:run ro:ron ru:rus rw:kin sa:san sc:srd sd:snd se:sme sg:sag sh:hbs
si:sin sk:slk sl:slv sm:smo sn:sna so:som sq:sqi sr:srp ss:ssw st:sot su:sun sv:swe sw:swa
ta:tam te:tel tg:tgk th:tha ti:tir tk:tuk tl:tgl tn:tsn to:ton tr:tur ts:tso tt:tat tw:twi
ty:tah ug:uig uk:ukr ur:urd uz:uzb ve:ven vi:vie vo:vol wa:wln wo:wol xh:xho yi:yid yo:yor
za:zha zh:zho zu:zul
"""
_ISO_639_1_TO_3 = dict(pair.split(":") for pair in _PAIRS.split())
# ISO 639-2/B (bibliographic, used by EAD and EAC-CPF: ``fre``) -> 639-2/T (``fra``).
_B_PAIRS = """alb:sqi arm:hye baq:eus bur:mya chi:zho cze:ces dut:nld fre:fra geo:kat ger:deu
gre:ell ice:isl mac:mkd mao:mri may:msa per:fas rum:ron slo:slk tib:bod wel:cym"""
_B_TO_T = dict(pair.split(":") for pair in _B_PAIRS.split())


def archive_lang(code: str) -> str:
    """The archive's language code for an ISO code: ``en`` → ``lg-eng``, ``pt-BR`` → ``lg-por``.

    Three-letter codes are kept (``grc`` → ``lg-grc``), bibliographic ones made terminological
    (``fre`` → ``lg-fra``, ``ger`` → ``lg-deu``); an empty code is language-neutral, and
    a code the table does not know keeps its own letters (``lg-xx``).
    """
    base = code.strip().lower().replace("_", "-").split("-")[0]
    if not base:
        return NEUTRAL_LANG
    base = _B_TO_T.get(base, base)
    return "lg-" + _ISO_639_1_TO_3.get(base, base)


_3_TO_1 = {three: one for one, three in _ISO_639_1_TO_3.items()}


def iso_lang(lang: str) -> str:
    """The ISO code of an archive language for ``xml:lang``: ``lg-fra`` → ``fr``, ``lg-grc`` →
    ``grc``; "" for a language-neutral value (the inverse of :func:`archive_lang`)."""
    code = lang.removeprefix("lg-")
    if not code or lang == NEUTRAL_LANG:
        return ""
    return _3_TO_1.get(code, code)
