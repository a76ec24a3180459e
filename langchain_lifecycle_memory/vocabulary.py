"""The stable snake_case attribute vocabulary shared by extraction and retrieval.

Extraction teaches these names to the model (and the rule extractor emits them);
retrieval routes a query to the attributes whose topics it touches, which is how
"我适合用什么工具写 Python？" reaches the ``editor`` slot. Users may add their own.

Topics are the attribute's routing card: short situations, in English *and* Chinese,
where the fact helps ("planning a road trip" for ``car``). Write them as situations,
not as question templates: "什么时候有空" is close to every "…吗？" question, while
"availability for calls and meetings" is close only to scheduling. A query scores the
mean of its two best phrases, so each situation is worth stating in both languages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_ATTRIBUTES", "AttributeSpec", "attribute_names"]


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
        (
            "tools for writing code",
            "IDE plugins and extensions",
            "programming setup",
            "写代码用什么工具",
            "编程插件",
            "开发环境",
        ),
    ),
    AttributeSpec(
        "programming_language",
        "main programming language",
        "编程语言",
        "preference",
        (
            "which programming language to use for a project",
            "release notes of a programming language",
            "用什么编程语言写项目",
            "编程语言新版本",
        ),
    ),
    AttributeSpec(
        "job",
        "occupation / role",
        "职业",
        "profile",
        (
            "what I do for a living",
            "what I teach or work on",
            "work shifts and schedule",
            "availability for calls and meetings",
            "我是做什么工作的",
            "教书上课或工作内容",
            "上班班次和作息",
            "方便打电话开会的时间",
        ),
    ),
    AttributeSpec(
        "job_title",
        "job title or level",
        "职级",
        "profile",
        ("my position or rank at work", "promotion at work", "我的职位", "职级和升职"),
    ),
    AttributeSpec(
        "employer",
        "company they work at",
        "公司",
        "profile",
        ("the company I work for", "my workplace", "我在哪家公司上班", "工作单位"),
    ),
    AttributeSpec(
        "city",
        "city they live or work in",
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
        ("ordering a drink at a café", "my usual morning coffee", "点一杯饮料", "早上喝的咖啡", "奶茶"),
    ),
    AttributeSpec(
        "tea", "favourite tea", "茶", "preference", ("buying tea leaves", "my favourite tea", "买茶叶", "爱喝的茶")
    ),
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
        ("recipes and ingredients", "food I should avoid", "smoothies, milk and desserts", "食谱和食材", "忌口"),
        cardinality="set",
    ),
    AttributeSpec(
        "allergy",
        "allergies (food, medicine)",
        "过敏",
        "profile",
        (
            "medicine and prescriptions",
            "antibiotics",
            "doctor visit",
            "ingredients to watch out for when cooking",
            "eating out safely",
            "看医生开药",
            "吃药打针",
            "做菜的食材要注意什么",
        ),
        cardinality="set",
    ),
    AttributeSpec(
        "cuisine",
        "favourite cuisine or food they crave",
        "菜系",
        "preference",
        ("where to eat tonight", "restaurant recommendation", "想吃什么菜", "去哪吃饭"),
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
        (
            "arrangements at home while I travel",
            "travelling away from home",
            "my dog or cat",
            "出门旅行时家里宠物的照顾",
            "我的猫狗",
        ),
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
    AttributeSpec(
        "sport",
        "sport they play",
        "运动",
        "preference",
        ("sports gear and equipment", "sports venue or club", "exercise I do", "运动装备", "运动场馆", "我做的运动"),
        cardinality="set",
    ),
    AttributeSpec("workout", "how they work out", "健身方式", "fact", ("exercise routine", "健身计划")),
    AttributeSpec(
        "instrument",
        "musical instrument",
        "乐器",
        "profile",
        ("concerts and performances", "music lessons", "演出和音乐会", "学乐器"),
        cardinality="set",
    ),
    AttributeSpec(
        "music",
        "music they listen to",
        "音乐",
        "preference",
        ("put on some music", "a playlist for me", "放点音乐", "听歌"),
    ),
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
    AttributeSpec(
        "car",
        "car they drive",
        "汽车",
        "fact",
        (
            "planning a road trip",
            "where to charge or refuel my car",
            "driving my car",
            "自驾游",
            "开车出行",
            "充电加油",
        ),
    ),
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
        ("language-learning app", "studying a foreign language", "学外语"),
        cardinality="set",
    ),
    AttributeSpec(
        "native_language",
        "native language",
        "母语",
        "profile",
        ("language I know best", "mother tongue", "最熟悉的语言"),
    ),
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
        ("family activities with my kids", "school and childcare", "带孩子出去玩", "孩子上学"),
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
    AttributeSpec("email", "email address", "邮箱", "sensitive", ("send me an email", "account email", "邮件地址")),
    AttributeSpec("id_number", "national ID number", "身份证号", "sensitive", ("fill in a form", "填表用的证件号")),
    AttributeSpec("address", "home address", "住址", "sensitive", ("deliveries and shipping", "快递收货地址")),
    AttributeSpec("age", "age", "年龄", "profile", ("how old I am", "我多大")),
    AttributeSpec("birthday", "birthday", "生日", "profile", ("birthday plans", "过生日")),
    AttributeSpec("grade", "school grade", "年级", "profile", ("school year", "上几年级")),
    AttributeSpec("school", "school or university", "学校", "profile", ("my studies", "在哪上学")),
)


def attribute_names(extra: tuple[AttributeSpec, ...] = ()) -> list[str]:
    """All attribute names, built-in first, then ``extra``."""
    return [a.name for a in (*DEFAULT_ATTRIBUTES, *extra)]
