"""The snake_case attribute vocabulary shared by extraction (slot names) and retrieval (query routing).

Topics are short, general situations in English and Chinese, never paraphrases of a test question
(``benchmarks/enumeration_audit.py`` checks); keep descriptions free of other slots' nouns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_ATTRIBUTES", "DIMINUTIVES", "RELATIONS", "AttributeSpec", "Relation", "attribute_names", "card_phrases",
    "humanize", "weekdays",
]  # fmt: skip


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute of the vocabulary.

    Example:
        >>> AttributeSpec("boat", "boat they sail", "船", "fact", ("sailing trip", "出海")).zh
        '船'
    """

    name: str
    description: str
    zh: str
    kind: str = "profile"
    topics: tuple[str, ...] = field(default_factory=tuple)
    """Situations where this attribute matters (en and zh), used for query routing."""
    cardinality: str = "single"
    """``set`` when one person holds several values at once (allergies, pets): a new value joins."""
    aliases: tuple[str, ...] = ()
    """Other names an extractor may give this slot; used for slot identity, not for routing."""
    replaces_alike: bool = False
    """For a ``set``: a new value replaces a current one of the same kind (an editor preferred over
    another editor), and joins the others (a preferred tea stays beside the editor)."""
    against: bool = False
    """It holds what the person is against (dislikes, avoids): a value here ends the same value held for under
    any other slot of theirs ("I hate jazz" after "I love jazz"), and a value held for ends it here."""


def humanize(name: str) -> str:
    """An attribute id as words (``running_shoes`` -> ``running shoes``)."""
    return " ".join(part for part in re.split(r"[_\-\s]+", name) if part)


def card_phrases(attribute: str, spec: AttributeSpec | None) -> list[str]:
    """What routes a question to an attribute: its name and description, Chinese name and topic situations.

    >>> card_phrases("boat_club", None)
    ['boat club']
    """
    if spec is None:
        return [humanize(attribute)]
    head = f"{humanize(spec.name)}: {spec.description}"
    return [head, spec.zh, *spec.topics] if spec.zh else [head, *spec.topics]


DEFAULT_ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec(
        "name",
        "the person's name",
        "名字",
        "profile",
        ("what to call me", "how to address me", "我叫什么", "怎么称呼我"),
    ),
    AttributeSpec(
        "editor",
        "code editor or IDE they use",
        "编辑器",
        "preference",
        ("programming setup", "写代码用什么工具", "开发环境"),
    ),
    AttributeSpec(
        "programming_language",
        "main programming language",
        "编程语言",
        "preference",
        ("which programming language to use for a project", "用什么编程语言写项目"),
    ),
    AttributeSpec(
        "job",
        "occupation / role",
        "职业",
        "profile",
        ("what I do for a living", "what I teach or work on", "我是做什么工作的", "方便打电话开会的时间"),
    ),
    AttributeSpec("job_title", "job title or level", "职级", "profile", ("promotion at work",)),
    AttributeSpec(
        "employer",
        "company they work at",
        "公司",
        "profile",
        ("the company I work for", "my workplace", "我在哪家公司上班", "工作单位"),
        aliases=("workplace",),
    ),
    AttributeSpec(
        "city",
        "city they live in (home) or work in",
        "城市",
        "profile",
        ("the city where I live", "local recommendations near me", "我住在哪个城市", "本地推荐"),
        aliases=("residence",),
    ),
    AttributeSpec(
        "district",
        "district or neighbourhood they live in",
        "住的区",
        "profile",
        ("my neighbourhood", "我住的小区和街区"),
    ),
    AttributeSpec(
        "drink",
        "usual drink (coffee, tea...)",
        "饮品",
        "preference",
        ("ordering a drink at a café", "点一杯饮料", "早上喝的咖啡"),
    ),
    AttributeSpec("tea", "favourite tea", "茶", "preference", ("my favourite tea",)),
    AttributeSpec("coffee_bean", "favourite coffee beans", "咖啡豆", "preference", ("buying coffee beans", "买咖啡豆")),
    AttributeSpec(
        "alcohol",
        "whether and what alcohol they drink",
        "喝酒",
        "profile",
        ("alcohol at a party or bar", "wine with dinner", "聚会喝酒"),
    ),
    AttributeSpec(
        "diet",
        "diet (vegetarian, vegan...)",
        "饮食",
        "profile",
        ("choosing a restaurant", "cooking a meal", "dinner with friends", "聚餐选餐厅", "做饭吃饭"),
    ),
    AttributeSpec(
        "diet_restriction",
        "food intolerance or restriction",
        "饮食禁忌",
        "profile",
        ("recipes and ingredients", "food I should avoid", "食谱和食材", "忌口"),
        cardinality="set",
    ),
    AttributeSpec(
        "allergy",
        "allergies (food, medicine)",
        "过敏",
        "profile",
        ("doctor visit", "eating out safely", "看医生开药", "做菜的食材要注意什么"),
        cardinality="set",
    ),
    AttributeSpec(
        "cuisine",
        "favourite cuisine or food they crave",
        "菜系",
        "preference",
        ("restaurant recommendation", "想吃什么菜", "去哪吃饭"),
    ),
    AttributeSpec(
        "food",
        "favourite food or dish",
        "爱吃的食物",
        "preference",
        ("my favourite dish", "dinner plans", "我爱吃的菜", "晚饭吃什么"),
    ),
    AttributeSpec(
        "spice_tolerance",
        "how much spicy food they can eat",
        "吃辣程度",
        "profile",
        ("ordering dishes at a restaurant", "spicy food", "点菜", "吃辣"),
    ),
    AttributeSpec(
        "pet",
        "pet and its name",
        "宠物",
        "profile",
        ("arrangements at home while I travel", "my dog or cat", "我的猫狗"),
        cardinality="set",
    ),
    AttributeSpec("dog_breed", "breed of their dog", "狗的品种", "profile", ("my dog's breed", "我家狗的品种")),
    AttributeSpec(
        "hobby",
        "hobby",
        "爱好",
        "preference",
        ("my hobbies and free time", "things I enjoy doing", "业余爱好", "空闲时间喜欢做的事"),
        cardinality="set",
    ),
    AttributeSpec("sport", "sport they play", "运动", "preference", ("我做的运动",), cardinality="set"),
    AttributeSpec("workout", "how they work out", "健身方式", "fact", ("exercise routine", "健身计划")),
    AttributeSpec("instrument", "musical instrument", "乐器", "profile", ("music lessons",), cardinality="set"),
    AttributeSpec("music", "music they listen to", "音乐", "preference", ("听歌",)),
    AttributeSpec(
        "favorite_band",
        "favourite band or artist",
        "喜欢的乐队",
        "preference",
        ("concert tickets", "my favourite singer", "演唱会", "喜欢的歌手"),
    ),
    AttributeSpec(
        "podcast", "podcast they listen to", "播客", "preference", ("something to listen to on the go", "听播客")
    ),
    AttributeSpec("favorite_movie", "favourite film", "喜欢的电影", "preference", ("movie night", "看电影")),
    AttributeSpec(
        "current_book",
        "book they are reading",
        "在读的书",
        "preference",
        ("book recommendations", "the book I'm reading", "推荐书", "在看的书"),
    ),
    AttributeSpec(
        "book_genre", "genre of books they read", "书的类型", "preference", ("book recommendations", "推荐书")
    ),
    AttributeSpec("car", "car they drive", "汽车", "fact", ("planning a road trip", "driving my car", "开车出行")),
    AttributeSpec("commute", "how they commute", "通勤方式", "fact", ("getting to work", "上班路线和交通")),
    AttributeSpec(
        "travel_plan",
        "upcoming trip or travel plan",
        "旅行计划",
        "event",
        ("vacation plans", "upcoming trip", "旅行计划", "假期安排"),
    ),
    AttributeSpec(
        "smartphone",
        "phone model",
        "手机",
        "fact",
        ("phone apps", "phone accessories", "手机应用和配件"),
        aliases=("mobile", "cellphone"),
    ),
    AttributeSpec(
        "laptop",
        "laptop or computer they use",
        "笔记本电脑",
        "fact",
        ("computer accessories and chargers", "电脑型号", "电脑配件"),
    ),
    AttributeSpec(
        "learning_language",
        "language they are learning",
        "在学的语言",
        "profile",
        ("studying a foreign language", "学外语"),
        cardinality="set",
    ),
    AttributeSpec("native_language", "native language", "母语", "profile", ("mother tongue",)),
    AttributeSpec(
        "language",
        "languages they speak",
        "会说的语言",
        "profile",
        ("talking to locals when travelling", "which languages I speak", "出国和当地人交流", "会说哪些语言"),
        cardinality="set",
    ),
    AttributeSpec(
        "child",
        "their children (names)",
        "孩子",
        "profile",
        ("family activities with my kids", "school and childcare", "带孩子出去玩"),
        cardinality="set",
    ),
    AttributeSpec(
        "medication",
        "medicines they take regularly",
        "在吃的药",
        "profile",
        ("medicine I take every day", "drug interactions", "每天吃的药", "药物相互作用"),
        cardinality="set",
    ),
    AttributeSpec("phone", "phone number", "手机号", "sensitive", ("contact me by phone", "联系方式")),
    AttributeSpec("email", "email address", "邮箱", "sensitive", ("send me an email", "邮件地址")),
    AttributeSpec("id_number", "national ID number", "身份证号", "sensitive", ()),
    AttributeSpec("address", "home address", "住址", "sensitive", ("deliveries and shipping", "快递收货地址")),
    AttributeSpec("age", "age", "年龄", "profile", ("how old I am", "我多大")),
    AttributeSpec("birthday", "birthday", "生日", "profile", ("birthday plans", "过生日")),
    AttributeSpec("grade", "school grade", "年级", "profile", ("school year", "上几年级")),
    AttributeSpec("school", "school or university", "学校", "profile", ("my studies", "在哪上学")),
    AttributeSpec("uses", "what they use regularly", "常用的工具、软件和产品", "preference", (), cardinality="set"),
    AttributeSpec("plays", "what they play", "玩的游戏、运动或乐器", "preference", (), cardinality="set"),
    AttributeSpec("wears", "what they wear", "穿戴的衣物和配饰", "fact", (), cardinality="set"),
    AttributeSpec("rides", "what they ride", "骑或乘坐的交通工具", "fact", (), cardinality="set"),
    AttributeSpec("eats", "what they eat often", "常吃的东西", "preference", (), cardinality="set"),
    AttributeSpec("reads", "what they read", "常读的书和读物", "preference", (), cardinality="set"),
    AttributeSpec("watches", "what they watch", "常看的节目、剧和电影", "preference", (), cardinality="set"),
    AttributeSpec("listens_to", "what they listen to", "常听的音乐和节目", "preference", (), cardinality="set"),
    AttributeSpec("writes", "what they write, or write in", "写的东西或用的语言", "preference", (), cardinality="set"),
    AttributeSpec("collection", "what they collect", "收藏的东西", "preference", (), cardinality="set"),
    AttributeSpec("grows", "what they grow", "种的植物", "fact", (), cardinality="set"),
    AttributeSpec("plant", "plants they keep", "养的植物", "fact", (), cardinality="set"),
    AttributeSpec("keeps", "what they keep at home", "养的动植物", "fact", (), cardinality="set"),
    AttributeSpec("takes", "what they take regularly", "常吃的药和补充剂", "profile", (), cardinality="set"),
    AttributeSpec("smokes", "what they smoke", "抽的烟", "profile", ()),
    AttributeSpec("learning", "what they are learning", "在学的东西", "profile", (), cardinality="set"),
    AttributeSpec("practices", "what they practise", "在练的东西", "preference", (), cardinality="set"),
    AttributeSpec("volunteering", "where they volunteer", "做志愿者的地方", "fact", (), cardinality="set"),
    AttributeSpec("likes", "what they like", "喜欢的东西", "preference", (), cardinality="set"),
    AttributeSpec(
        "prefers",
        "what they prefer to its alternatives",
        "更喜欢的东西",
        "preference",
        (),
        cardinality="set",
        replaces_alike=True,
    ),
    AttributeSpec("dislikes", "what they dislike", "不喜欢的东西", "preference", (), cardinality="set", against=True),
    AttributeSpec(
        "avoids",
        "what they never eat, drink, smoke or use",
        "不吃、不喝或不用的东西",
        "profile",
        (),
        cardinality="set",
        against=True,
    ),
    AttributeSpec("goes_to", "where they go regularly", "常去的地方", "preference", (), cardinality="set"),
    AttributeSpec("craving", "what they crave at the moment", "最近想吃的东西", "preference", ()),
    AttributeSpec("fan_of", "what they are a fan of", "喜欢追的球队、明星或作品", "preference", (), cardinality="set"),
    AttributeSpec("work_field", "the field they work in", "工作的行业", "profile", ()),
    AttributeSpec("member_of", "what they have joined", "参加的团体、俱乐部", "fact", (), cardinality="set"),
    AttributeSpec("teaching", "what they teach", "教的课", "profile", (), cardinality="set"),
    AttributeSpec("major", "what they study", "专业", "profile", ()),
    AttributeSpec("minor", "their minor subject", "辅修", "profile", ()),
    AttributeSpec("housing", "the kind of home they live in", "住的房子", "profile", ()),
    AttributeSpec("hometown", "where they come from", "老家", "profile", ()),
    AttributeSpec("birthplace", "where they were born", "出生地", "profile", ()),
    AttributeSpec("moving_to", "where they are about to move", "要搬去的地方", "event", ()),
    AttributeSpec("travel_mode", "how they travel", "出行方式", "fact", ()),
    AttributeSpec("fear", "what they are afraid of", "害怕的东西", "profile", (), cardinality="set"),
    AttributeSpec("trait", "lasting personal traits", "个人特点和身体状况", "profile", (), cardinality="set"),
    AttributeSpec(
        "medical_condition", "long-term health conditions", "慢性病和健康状况", "profile", (), cardinality="set"
    ),
    AttributeSpec("marital_status", "whether they are married", "婚姻状况", "profile", ()),
    AttributeSpec("handedness", "left- or right-handed", "左撇子还是右撇子", "profile", ()),
    AttributeSpec("project", "what they are working on", "在做的项目", "fact", (), cardinality="set"),
    AttributeSpec("training_for", "what they are training for", "在备战的目标", "event", ()),
    AttributeSpec("business", "a business they run", "经营的生意", "profile", (), cardinality="set"),
    AttributeSpec("staying_at", "where they are staying for now", "暂住的地方", "fact", ()),
    AttributeSpec("work_location", "where they work from at the moment", "在哪办公", "fact", ()),
)


def attribute_names(extra: tuple[AttributeSpec, ...] = ()) -> list[str]:
    """All attribute names, built-in first, then ``extra``."""
    return [a.name for a in (*DEFAULT_ATTRIBUTES, *extra)]


@dataclass(frozen=True)
class Relation:
    """A word by which the user speaks of someone close ("my sister Kasia", "我表妹晓雯").

    Extraction files that person's facts under ``<key>_<name>``; retrieval finds them by any form.

    Example:
        >>> next(r for r in RELATIONS if "mom" in r.en).key
        'mother'
    """

    key: str
    """English stem of the entity id, whatever form was said ("mom" and "妈" are ``mother``)."""
    en: tuple[str, ...]
    zh: tuple[str, ...] = ()
    """Chinese forms; ``"妈=妈妈"``: a colloquial form and the word a statement writes for it."""
    family: bool = True
    """Family words name a person on their own ("老婆喜欢什么？"); social ones ("friends", "同事") only when
    possessed ("my friend") or named."""
    broader: str | None = None
    """A relation whose words name this person too ("my spouse", "爱人" for a wife or a husband)."""
    one: bool = False
    """One person at a time holds it (a wife, a landlord); of the others one can have many (classmates, 同事)."""

    @property
    def words(self) -> tuple[str, ...]:
        """The relation's own words, English then Chinese (colloquial forms as said)."""
        return (*self.en, *(z.partition("=")[0] for z in self.zh))

    def forms(self) -> tuple[str, ...]:
        """Every word for this person, the broader relation's included.

        A doubled Chinese word also by its place among siblings: 叔叔 is "二叔", "三叔" too (not "大舅": "大爷",
        "大妈" are anyone's).
        """
        broad = next((r for r in RELATIONS if r.key == self.broader), None)
        ranked = tuple(rank + w[0] for w in self.words if len(w) == 2 and w[0] == w[1] for rank in "二三四五")
        return self.words + ranked + (broad.forms() if broad is not None else ())


DIMINUTIVES = "小阿老"
"""Diminutives before a Chinese given name of one character ("小芳", "阿旺", "老郑"): an entity id keeps the name
without one (``sister_fang``, ``nephew_旺``), and a question may say it with any of them."""

RELATIONS: tuple[Relation, ...] = (
    Relation("wife", ("wife",), ("老婆=妻子", "妻子", "太太", "媳妇=妻子"), broader="spouse", one=True),
    Relation("husband", ("husband",), ("老公=丈夫", "丈夫"), broader="spouse", one=True),
    Relation("spouse", ("spouse",), ("爱人", "伴侣", "老伴"), one=True),
    Relation("partner", ("partner",), ("对象",), one=True),
    Relation("fiance", ("fiance", "fiancee", "fiancé", "fiancée"), ("未婚夫", "未婚妻"), broader="partner", one=True),
    Relation("girlfriend", ("girlfriend",), ("女朋友", "女友"), broader="partner", one=True),
    Relation("boyfriend", ("boyfriend",), ("男朋友", "男友"), broader="partner", one=True),
    Relation("sister", ("sister", "sis"), ("姐姐", "妹妹", "姐", "妹")),
    Relation("brother", ("brother", "bro"), ("哥哥", "弟弟", "哥", "弟")),
    Relation("son", ("son", "stepson"), ("儿子",), broader="child"),
    Relation("daughter", ("daughter", "stepdaughter"), ("女儿", "闺女"), broader="child"),
    Relation("child", ("child", "children", "kid", "kids"), ("孩子",)),
    Relation("parent", ("parent", "parents"), ("爸妈", "父母", "双亲", "爹妈")),
    Relation(
        "mother",
        ("mother", "mom", "mum", "mama", "stepmother"),
        ("妈妈", "母亲", "老妈=妈妈", "妈=妈妈"),
        broader="parent",
        one=True,
    ),
    Relation(
        "father",
        ("father", "dad", "daddy", "papa", "stepfather"),
        ("爸爸", "父亲", "老爸=爸爸", "爸=爸爸"),
        broader="parent",
        one=True,
    ),
    Relation("grandmother", ("grandmother", "grandma", "granny"), ("奶奶", "外婆", "姥姥")),
    Relation("grandfather", ("grandfather", "grandpa"), ("爷爷", "外公", "姥爷")),
    Relation("grandchild", ("grandchild", "grandkid"), ()),
    Relation("grandson", ("grandson",), ("孙子", "外孙"), broader="grandchild"),
    Relation("granddaughter", ("granddaughter",), ("孙女", "外孙女"), broader="grandchild"),
    Relation("aunt", ("aunt", "auntie"), ("阿姨", "姑姑", "姨妈", "舅妈", "婶婶")),
    Relation("uncle", ("uncle",), ("叔叔", "舅舅", "伯伯")),
    Relation("cousin", ("cousin",), ("表哥", "表姐", "表妹", "表弟", "堂哥", "堂姐", "堂妹", "堂弟")),
    Relation("niece", ("niece",), ("侄女", "外甥女")),
    Relation("nephew", ("nephew",), ("侄子", "外甥")),
    Relation("father_in_law", (), ("公公", "岳父"), one=True),  # English: any relation word takes "-in-law"
    Relation("mother_in_law", (), ("婆婆", "岳母"), one=True),
    Relation("son_in_law", (), ("女婿",)),
    Relation("daughter_in_law", (), ("儿媳", "儿媳妇")),
    Relation("brother_in_law", (), ("姐夫", "妹夫", "大伯子", "小叔子", "大舅子", "小舅子")),
    Relation("sister_in_law", (), ("嫂子", "弟媳", "大姑子", "小姑子", "大姨子", "小姨子")),
    Relation("friend", ("friend", "buddy", "pal"), ("朋友", "好朋友", "闺蜜", "发小", "兄弟"), False),
    Relation("best_friend", ("best friend",), (), False, broader="friend", one=True),
    Relation("colleague", ("colleague", "coworker", "co-worker"), ("同事",), False),
    Relation("boss", ("boss",), ("老板", "领导", "上司"), False, one=True),
    Relation("manager", ("manager",), (), False, broader="boss", one=True),
    Relation("roommate", ("roommate", "flatmate", "housemate"), ("室友", "舍友"), False),
    Relation("neighbor", ("neighbor", "neighbour"), ("邻居",), False),
    Relation("classmate", ("classmate", "schoolmate"), ("同学",), False),
    Relation("teammate", ("teammate",), ("队友",), False),
    Relation("teacher", ("teacher", "tutor", "coach", "mentor"), ("老师", "教练", "导师"), False),
    Relation("landlord", ("landlord", "landlady"), ("房东",), False, one=True),
)
"""The relation words of both languages, one source for extraction and retrieval."""


_DAY_EN = r"(mon|tues|wednes|thurs|fri|satur|sun)day"
_DAYS_EN = ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
_ONE_OFF_ZH = r"(?<![上下这本])"  # "上周五", "这周末": one day, not every week
_EVERY_EN = re.compile(
    rf"\bevery\s+{_DAY_EN}\b|\b{_DAY_EN}s\b|\b{_DAY_EN}\s+(?:morning|afternoon|evening|night)s\b"
    r"|\b(?P<weekends>(?:every\s+)?weekends)\b|\b(?P<weekdays>weekdays)\b",
    re.IGNORECASE,
)
_ANY_EN = re.compile(rf"\b{_DAY_EN}s?\b|\b(?P<weekends>weekends?)\b|\b(?P<weekdays>weekdays)\b", re.IGNORECASE)
_DAY_ZH = (
    r"(?:周|星期|礼拜)(?:(?P<days>[一二三四五六日天](?:[、和跟与及]?[一二三四五六日天])*)|(?P<weekends>末))"
    r"|(?P<weekdays>工作日)"
)
_EVERY_ZH = re.compile(_ONE_OFF_ZH + _DAY_ZH)
_ANY_ZH = re.compile(_DAY_ZH)
_DAY_WORD = re.compile(r"day|weekend|周|星期|礼拜|工作日", re.IGNORECASE)  # one quick scan for most texts


def weekdays(text: str, *, every: bool = True) -> frozenset[int]:
    """The days of the week ``text`` names (0 = Monday); weekends are 5 and 6, 工作日 or weekdays 0 to 4.

    ``every``: only days on which something recurs ("on Sundays", "每周二、四", "周末在少年宫教课"), not one day
    ("last Friday", "上周五", "这周末"); off, any day named ("this Saturday", "这周六上午").

    >>> sorted(weekdays("每周二、四晚上练")), sorted(weekdays("referees on weekends")), sorted(weekdays("上周五"))
    ([1, 3], [5, 6], [])
    >>> sorted(weekdays("Is Wednesday evening free?", every=False))
    [2]
    """
    if not _DAY_WORD.search(text):
        return frozenset()
    days: set[int] = set()
    for pattern in (_EVERY_EN, _EVERY_ZH) if every else (_ANY_EN, _ANY_ZH):
        for m in pattern.finditer(text):
            found = m.groupdict()
            if found["weekends"] or found["weekdays"]:
                days |= {5, 6} if found["weekends"] else set(range(5))
            elif found.get("days"):  # 周二、四
                days |= {"一二三四五六日".index(c.replace("天", "日")) for c in found["days"] if c not in "、和跟与及"}
            else:  # the English day's stem, the one group that matched
                days.add(_DAYS_EN.index(next(g for g in m.groups() if g).lower()))
    return frozenset(days)
