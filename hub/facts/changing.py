"""Facts that change over time: questions that ask for one, answers that claim one.

A small model offline cannot know who holds an office *now*, the latest release, a price, a
score or the news: what it learned is stale at best ("The Prime Minister of the United Kingdom
is The Queen Elizabeth II."). :func:`asks_changing` reads a question (an English keyword
grammar, no model, like :mod:`hub.facts.topics`) and names the kind of changing fact it asks
for; :func:`claims_changing` finds an answer sentence that states one ("currently ...", "the
latest ...", an office with a name, a price, a population). The graph says
:data:`OUT_OF_DATE` instead (:func:`hub.facts.answers.honest_answer`).

A stable fact is not changing: "what is the capital of France", "who wrote Hamlet", and a
question pinned to the past by its tense, an ordinal or a year ("who was the first president
of the United States", "who won the world cup in 1966"). A definition is not either ("what is
a stock", "what does a prime minister do"). The clock's, the weather's and the home's facts
are routed to their source before any of this (:func:`hub.facts.answers.route`).
"""

from __future__ import annotations

import re

from hub.facts.topics import words

OUT_OF_DATE = "I can't know that offline: my knowledge may be out of date."
"""Said instead of an answer about something that changes over time."""

KINDS = ("now", "office", "winner", "record", "market", "person")
"""What :func:`asks_changing` names: a time relative to now or the latest of something
(``now``), who holds an office or title (``office``), the winner of a recurring contest
(``winner``), a record or a superlative that records keep moving (``record``), a price, rate,
population, score or the news (``market``), a living person's marriage (``person``)."""


def _any(phrases: str) -> str:
    """A regex alternation of the ``|``-separated phrases, as whole words."""
    return r"\b(?:" + "|".join(p.strip() for p in phrases.split("|")) + r")\b"


# Word tables stay as written (filled lines, not one word a line).
# fmt: off
_NOW = re.compile(_any(
    "latest|newest|most recent|recent|recently|lately|up to date|upcoming|currently|now|"
    "at the moment|at present|presently|nowadays|these days|today|today's|todays|tonight|"
    "tomorrow|yesterday|so far|to date|yet|still|anymore|any more|as of|in power|in office|"
    "in charge|in the news|trending|what is new|whats new|going on|happening|out now|"
    "this (?:year|month|week|weekend|season|morning|afternoon|evening|summer|winter|spring|"
    "autumn|fall|decade)|last (?:night|week|weekend|month|year|season|time)"))
_CURRENT = re.compile(
    r"(?<!electric )(?<!electrical )(?<!alternating )(?<!direct )(?<!ocean )(?<!rip )"
    r"(?<!river )(?<!gulf )(?<!sea )\bcurrent (?!of\b|in\b|is\b|and\b|flow)\w")
"""'current' before a noun ("the current president"), not the noun ("electric current")."""
_NEW = re.compile(
    r"\b(?:the|a|your|their|his|her) new (?!york|zealand|jersey|mexico|delhi|orleans|"
    r"hampshire|england|guinea|south|testament|deal|world|year|moon|wave|age|brunswick|"
    r"caledonia|kingdom|stone)\w")
_NEXT = re.compile(r"\b(?:the )?next (?!to\b|door\b|number|prime|letter|step|word|line|term|"
                   r"integer|digit|page|sentence|one in|in the|\w+ after\b)\w")
"""'next' of a time ("the next election"), not of an order ("the next planet after earth")."""
_EVENT_LAST = re.compile(
    r"\b(?:the |their |her |his )?last (?:election|world cup|olympics|super bowl|season|game|"
    r"match|album|movie|film|episode|book|song|race|tournament|championship|final|series|"
    r"update|release|version|winner|champion)")
_OFFICE = (
    "president|presidents|vice president|prime minister|premier|chancellor|king|queen|"
    "monarch|emperor|empress|pope|ceo|chief executive|chairman|chairwoman|mayor|governor|"
    "senator|congressman|congresswoman|mp|member of parliament|speaker of the house|"
    "secretary general|secretary of state|minister|attorney general|chief justice|"
    "head of state|head of government|leader|ruler|dictator|first lady|crown prince|"
    "prince of wales|heir to the throne|archbishop|coach|head coach|manager|captain|"
    "quarterback|owner|host|presenter|anchor|commissioner|director general|fed chair")
_OFFICES = re.compile(_any(_OFFICE))
_IDIOM = re.compile(r"\b(?:king|queen) of (?:the )?(?:jungle|pop|rock|soul|beasts|hearts|"
                    r"spades|clubs|diamonds|castle|hill|gods|sea|underworld|fairies|night)\b|"
                    r"\b(?:burger king|king size|queen size|king cobra|queen bee|drama queen)\b")
_HOLDS = re.compile(_any(
    "who (?:is|are|currently|now)|who .* (?:is|are)|who runs|who leads|who heads|who rules|"
    "who governs|who owns|who manages|who coaches|who chairs|who captains|who hosts|who presents|"
    "name (?:of )?(?:the|our|their)|how old is the|^(?:is|are) "))
_RUNS = re.compile(_any(
    "who (?:runs|leads|heads|rules|governs|owns|manages|coaches|chairs|captains|hosts)"))
_EVENTS = (
    "cup|world cup|super bowl|superbowl|bowl|championship|championships|league|title|"
    "tournament|series|stanley cup|oscar|oscars|academy award|academy awards|best picture|"
    "grammy|grammys|emmy|emmys|golden globe|golden globes|award|awards|prize|nobel|"
    "ballon d'or|race|grand prix|formula one|f1|tour de france|final|finals|olympics|"
    "olympic|medal|open|wimbledon|masters|derby|eurovision|playoffs|pennant|election|"
    "elections|referendum|primary|primaries|game|match|season|contest|competition|mvp|"
    "pulitzer|booker|idol|bake off|big brother|x factor")
_WINNER = re.compile(
    r"\bwho (?:won|wins|is winning|is leading|will win)\b.*" + _any(_EVENTS)
    + r"|\bwinners? of\b|\bwho is winning\b|" + _any("champion|champions|title holder"))
_RECORD = re.compile(_any(
    "world record|record holder|holds the record|the record for|richest|wealthiest|"
    "most valuable|most followed|most subscribed|most popular|most streamed|most viewed|"
    "best selling|bestselling|best-selling|highest paid|highest grossing|top selling|"
    "oldest (?:living|person|man|woman|people)|tallest building|largest company|"
    "biggest company|fastest (?:man|woman|person|runner|human|car)|best player|best team|"
    "number one|world number one|top ranked|ranked number|top seed"))
_MARKET = re.compile(_any(
    "price|prices|cost|costs|worth|net worth|exchange rate|rate of exchange|interest rate|"
    "interest rates|mortgage rates|inflation|unemployment|stock|stocks|shares|share price|"
    "stock market|market cap|dow|dow jones|nasdaq|s&p|ftse|dax|nikkei|bitcoin|ethereum|"
    "crypto|cryptocurrency|dogecoin|gas prices|petrol price|fuel prices?|population|"
    "populations|gdp|poll|polls|approval rating|ranking|rankings|standings|league table|"
    "the score|scores|news|headlines|headline|box office|charts|billboard|bestseller|"
    "bestsellers|traffic|open now|opening hours|how many people live|how many people are there"))
_DEFINITION = re.compile(
    r"^(?:what (?:is|are) (?:a|an)\b|what does\b|what do\b|define\b|definition of\b|"
    r"meaning of\b|explain\b|what is meant by\b|why\b|what causes\b|how (?:does|do)\b|"
    r"how (?:is|are) .* (?:calculated|measured|determined|set|made|elected|chosen)$|"
    r"what (?:is|are) (?!the\b)\w+(?: \w+)?$)")
_PERSON = re.compile(r"\bwho is \w+(?: \w+)? (?:married to|dating|engaged to|going out with)\b|"
                     r"\bwho is \w+(?: \w+)?'s (?:wife|husband|girlfriend|boyfriend|partner|"
                     r"spouse)\b")
_PAST = re.compile(_any(
    "was|were|had|former|formerly|first|second|third|fourth|fifth|sixth|seventh|eighth|"
    "ninth|tenth|\\d+(?:st|nd|rd|th)|century|ancient|medieval|originally|historically|"
    "in history|during|ago"))
_YEAR = re.compile(r"\b(?:1\d{3}|20\d\d)s?\b")
# fmt: on


def _said(text: str) -> str:
    """The question's words, lower case and joined ("who's" read as "who is")."""
    return " ".join(words(text.replace("’", "'"))).replace("who's", "who is")


def asks_changing(question: str) -> str | None:
    """The kind of changing fact ``question`` asks for (one of :data:`KINDS`), or None.

    Args:
        question: what was said or typed (a question the rules and the fact step missed).
    Returns:
        ``"now"``, ``"office"``, ``"winner"``, ``"record"``, ``"market"``, ``"person"``;
        None for a stable fact, a definition, or one pinned to the past (a year pins any
        question; a past tense or an ordinal every one without a word of now: "who was the
        first president", but "what did the latest iphone cost" is ``now``).
    """
    said = _said(question)
    if not said or _YEAR.search(said):
        return None
    recent = _NOW.search(said) or _CURRENT.search(said) or _NEW.search(said)
    if recent or _NEXT.search(said) or _EVENT_LAST.search(said):
        return "now"
    if _DEFINITION.search(said) or _PAST.search(said):
        return None  # "what is a stock"; "who was the first president of the united states"
    office = _OFFICES.search(_IDIOM.sub(" ", said))
    if (office and _HOLDS.search(said)) or _RUNS.search(said):
        return "office"
    found = (
        ("winner", _WINNER),
        ("record", _RECORD),
        ("market", _MARKET),
        ("person", _PERSON),
    )
    return next((kind for kind, grammar in found if grammar.search(said)), None)


_TITLE = (
    r"(?i:president|prime minister|premier|chancellor|king|queen|monarch|emperor|pope|"
    r"ceo|chief executive|chairman|mayor|governor|leader|head of state|secretary[- ]general|"
    r"coach|manager|captain|owner)"
)
_NAME = r"[A-Z][\w.'-]*(?: (?:of |the |de |van |von )?[A-Z][\w.'-]*)*"
_CLAIMS = [
    # a time relative to now, or the latest of something
    re.compile(
        _any(
            "currently|presently|nowadays|these days|at the moment|at present|right now|as of|"
            "to date|so far|this year|latest|newest|most recent|recently|up[- ]to[- ]date|"
            "incumbent|reigning|defending champion|newly elected|(?:is|are|has|have) now|"
            "now (?:is|are|has|holds|serves|leads|runs)|(?:the|its|their) current"
        ),
        re.I,
    ),
    # an office held by a name: "The Chancellor of Germany is Angela Merkel.", "Japan's
    # Prime Minister, Shinzo Abe.", an office holder's age: "The President ... is 46"
    re.compile(
        rf"\b{_TITLE}(?: of (?:the )?{_NAME})?(?: (?:is|are) (?:(?i:currently|now) )?|, )"
        r"(?:[Tt]he )?[A-Z\d]"
    ),
    re.compile(rf"(?:^|, )(?!The\b){_NAME} (?:is|are) (?:(?i:currently|now) )?(?:the )?{_TITLE}\b"),
    # records, champions, populations, prices
    re.compile(
        _any(
            "holds? the (?:world )?record|world record holder|record holder|richest|wealthiest|"
            "most valuable|largest company|biggest company|world number one|on the charts|"
            "top song|best[- ]selling|highest[- ]paid|the score of|the score is|"
            "(?:is|are) the (?:world |reigning |current |defending )?champions?|population|"
            "inhabitants|home to (?:about |around |over |more than |nearly )?\\d|net worth|"
            "stock price|share price|trading at|market cap"
        ),
        re.I,
    ),
    re.compile(
        r"[$€£¥]\s?\d|\d[\d,.]*\s*(?:dollars|euros|usd|eur|gbp|yen)\b|"
        r"\b(?:costs?|worth|priced at) (?:about |around |roughly |approximately |over )?[$€£\d]",
        re.I,
    ),
]


def claims_changing(answer: str) -> bool:
    """True when ``answer`` (one sentence a language model wrote) states a fact that changes
    over time: "currently", "the latest", an office held by a name ("Angela Merkel is the
    Chancellor of Germany."), a record holder or champion, a population, a price."""
    return any(p.search(answer) for p in _CLAIMS)
