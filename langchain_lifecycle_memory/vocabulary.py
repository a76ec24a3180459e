"""The stable snake_case attribute vocabulary shared by extraction and retrieval.

Extraction teaches these names to the model (and the rule extractor emits them);
retrieval routes a query to the attributes whose topics it touches, which is how
"我适合用什么工具写 Python？" reaches the ``editor`` slot. Users may add their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_ATTRIBUTES", "AttributeSpec", "attribute_names"]


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute of the vocabulary."""

    name: str
    description: str
    zh: str
    kind: str = "profile"
    topics: tuple[str, ...] = field(default_factory=tuple)
    """Situations where this attribute matters (en and zh), used for query routing."""


DEFAULT_ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec("name", "the person's name", "名字", "profile", ("what is my name", "how to address me", "我叫什么", "怎么称呼我")),
    AttributeSpec("editor", "code editor or IDE they use", "编辑器", "preference",
                  ("tools for writing code", "IDE plugins and extensions", "programming setup",
                   "写代码用什么工具", "编程插件", "开发环境")),
    AttributeSpec("programming_language", "main programming language", "编程语言", "preference",
                  ("which language for a project", "release notes of a language", "coding a new project",
                   "用什么语言写", "编程语言新版本")),
    AttributeSpec("job", "occupation / role", "职业", "profile",
                  ("what I do for a living", "work schedule and shifts", "when I am available or busy",
                   "scheduling a meeting or call", "what I teach or work on",
                   "我是做什么工作的", "上班时间", "什么时候有空")),
    AttributeSpec("job_title", "job title or level", "职级", "profile",
                  ("my position or rank at work", "promotion", "我的职位", "升职")),
    AttributeSpec("employer", "company they work at", "公司", "profile",
                  ("where do I work", "which company", "我在哪家公司上班", "工作单位")),
    AttributeSpec("city", "city they live or work in", "城市", "profile",
                  ("where do I live", "local recommendations near me", "我住在哪里", "我在哪个城市")),
    AttributeSpec("district", "district or neighbourhood they live in", "住的区", "profile",
                  ("my neighbourhood", "附近", "我住哪个区")),
    AttributeSpec("drink", "usual drink (coffee, tea...)", "饮品", "preference",
                  ("what to order at a café", "morning coffee", "a drink for me", "早上喝什么", "咖啡", "奶茶")),
    AttributeSpec("tea", "favourite tea", "茶", "preference", ("喝什么茶", "tea to buy", "买茶叶")),
    AttributeSpec("coffee_bean", "favourite coffee beans", "咖啡豆", "preference", ("buying coffee beans", "买咖啡豆")),
    AttributeSpec("alcohol", "whether and what alcohol they drink", "喝酒", "profile",
                  ("drinks at a party or bar", "wine with dinner", "聚会喝什么酒")),
    AttributeSpec("diet", "diet (vegetarian, vegan...)", "饮食", "profile",
                  ("restaurant choice", "recipes", "what to cook for dinner", "聚餐选餐厅", "吃什么", "做饭")),
    AttributeSpec("diet_restriction", "food intolerance or restriction", "饮食禁忌", "profile",
                  ("recipes", "what food to avoid", "smoothies and desserts", "食谱", "不能吃什么")),
    AttributeSpec("allergy", "allergies (food, medicine)", "过敏", "profile",
                  ("medicine", "antibiotics", "doctor visit", "cooking ingredients to watch out for",
                   "eating out safely", "看医生", "用药", "吃东西要注意什么")),
    AttributeSpec("cuisine", "favourite cuisine or food they crave", "菜系", "preference",
                  ("where to eat tonight", "restaurant recommendation", "想吃什么菜", "去哪吃饭")),
    AttributeSpec("food", "favourite food or dish", "爱吃的食物", "preference",
                  ("what to eat", "dinner plans", "爱吃什么", "晚饭吃什么")),
    AttributeSpec("spice_tolerance", "how much spicy food they can eat", "吃辣程度", "profile", ("点菜", "ordering food")),
    AttributeSpec("pet", "pet and its name", "宠物", "profile",
                  ("travelling away from home", "pet care", "my dog or cat", "出门旅行家里安排", "宠物叫什么")),
    AttributeSpec("dog_breed", "breed of their dog", "狗的品种", "profile", ("what breed is my dog", "狗是什么品种")),
    AttributeSpec("hobby", "hobby", "爱好", "preference", ("free time activities", "周末做什么", "业余爱好")),
    AttributeSpec("sport", "sport they play", "运动", "preference",
                  ("sports gear", "sports venues", "exercise", "运动装备", "运动场馆", "健身")),
    AttributeSpec("workout", "how they work out", "健身方式", "fact", ("exercise routine", "健身计划")),
    AttributeSpec("instrument", "musical instrument", "乐器", "profile",
                  ("concerts and performances", "music lessons", "演出", "音乐会")),
    AttributeSpec("music", "music they listen to", "音乐", "preference", ("put on some music", "playlist", "放点音乐", "听歌")),
    AttributeSpec("favorite_band", "favourite band or artist", "喜欢的乐队", "preference", ("concerts", "喜欢的歌手")),
    AttributeSpec("podcast", "podcast they listen to", "播客", "preference", ("something to listen to", "听点什么")),
    AttributeSpec("favorite_movie", "favourite film", "喜欢的电影", "preference", ("movie night", "看什么电影")),
    AttributeSpec("current_book", "book they are reading", "在读的书", "preference",
                  ("book recommendations", "what am I reading", "推荐书")),
    AttributeSpec("book_genre", "genre of books they read", "书的类型", "preference", ("book recommendations", "推荐书")),
    AttributeSpec("car", "car they drive", "汽车", "fact",
                  ("road trip", "charging or fuel stops", "driving", "自驾", "开车", "充电加油")),
    AttributeSpec("commute", "how they commute", "通勤方式", "fact", ("getting to work", "上班路线")),
    AttributeSpec("travel_plan", "upcoming trip or travel plan", "旅行计划", "event", ("vacation plans", "旅行", "假期安排")),
    AttributeSpec("smartphone", "phone model", "手机", "fact", ("phone apps", "phone accessories", "手机应用")),
    AttributeSpec("laptop", "laptop or computer they use", "笔记本电脑", "fact",
                  ("computer accessories and chargers", "电脑型号", "电脑配件")),
    AttributeSpec("learning_language", "language they are learning", "在学的语言", "profile",
                  ("language-learning app", "studying a foreign language", "学外语")),
    AttributeSpec("native_language", "native language", "母语", "profile",
                  ("language I know best", "mother tongue", "最熟悉的语言")),
    AttributeSpec("phone", "phone number", "手机号", "sensitive", ("contact me", "联系方式")),
    AttributeSpec("email", "email address", "邮箱", "sensitive", ("send me something", "account email")),
    AttributeSpec("id_number", "national ID number", "身份证号", "sensitive", ("fill in a form", "填表")),
    AttributeSpec("address", "home address", "住址", "sensitive", ("deliveries", "快递")),
    AttributeSpec("age", "age", "年龄", "profile", ("how old am I", "我多大")),
    AttributeSpec("birthday", "birthday", "生日", "profile", ("birthday plans", "生日")),
    AttributeSpec("grade", "school grade", "年级", "profile", ("school year", "上几年级")),
    AttributeSpec("school", "school or university", "学校", "profile", ("my studies", "学校")),
)


def attribute_names(extra: tuple[AttributeSpec, ...] = ()) -> list[str]:
    """All attribute names, built-in first, then ``extra``."""
    return [a.name for a in (*DEFAULT_ATTRIBUTES, *extra)]
