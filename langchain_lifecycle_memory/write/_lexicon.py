"""Word lists behind the rule extractor: lexicons, verb concepts, slot nouns, relations, romanisation."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from langchain_lifecycle_memory.schema import SELF_ENTITIES, normalize_value
from langchain_lifecycle_memory.vocabulary import DIMINUTIVES, RELATIONS

__all__ = [
    "CITY_SUFFIX", "canonical_entity", "EN_FUNCTION_WORDS", "EN_PRONOUNS", "EN_RELATIONS", "EN_VERBS", "LEX",
    "NOT_OCCUPATION", "NOUN_ATTRIBUTES", "ORG_SUFFIX", "VERB_CONCEPTS", "ZH_MEASURE", "ZH_MY", "ZH_RELATIONS",
    "ZH_TOPIC_VERBS", "ZH_VERBS", "Concept", "concept_attribute", "is_condition", "is_language", "is_medicine",
    "CONDITION_ENDINGS", "MEDICINE_ENDINGS_ZH", "MEDICINE_STEMS", "condition_form", "medicine_form",
    "alternation", "is_term", "lookup", "misfiled", "romanize", "whole_words",
]  # fmt: skip

CJK = re.compile(r"[\u3400-\u9fff]")

EN_FUNCTION_WORDS = frozenset(
    "i me my mine we our us am is are was were be been have has had do does did will would can could should "
    "the a an and or but so to of in on at for with just really very also too not no it this that there "
    "im ive id ill dont cant".split()
)
"""English words that carry grammar, not content (a statement kept as said needs content words)."""
EN_PRONOUNS = frozenset(
    "you he she they it we i him her them his hers its their theirs your yours this that these those who what which "
    "where when why how everyone everybody someone somebody nobody nothing everything something anyone anything "
    "there here one each all both".split()
)
"""English pronouns and question words: a capitalized one at a sentence's start names no one."""


def _terms(text: str) -> frozenset[str]:
    return frozenset(t.strip().casefold() for t in text.split("|") if t.strip())


# Lexicons: "|"-separated terms, matched case-insensitively (see _lookup for how).
LEX: dict[str, frozenset[str]] = {
    k: _terms(v)
    for k, v in {
        "editor": "neovim|nvim|vi|spacemacs|doom emacs|vscode|visual studio code|visual studio|"
        ""
        "pycharm|webstorm|goland|clion|rider|android studio|xcode|eclipse|netbeans|"
        "sublime text|sublime|atom|zed|helix|nano|notepad++|jupyter|jupyterlab|windsurf|trae|kate|textmate",
        "programming_language": "javascript|typescript|rust|go|golang|c|c++|c#|f#|scala|"
        "ruby|php|swift|elixir|erlang|clojure|ocaml|julia|r|lua|perl|dart|zig|nim|fortran|cobol|matlab|objective-c|"
        "sql|bash|elm|lisp|scheme|racket|prolog|groovy|solidity|assembly|delphi",
        "language": "english|spanish|french|german|japanese|korean|chinese|mandarin|cantonese|italian|portuguese|"
        "russian|arabic|hindi|dutch|swedish|norwegian|danish|finnish|polish|turkish|greek|hebrew|vietnamese|"
        "indonesian|esperanto|latin|普通话|中文|汉语|粤语|英文|日文|法文|德文|韩文",
        "instrument": "piano|electric guitar|bass|cello|violin|viola|drums|flute|clarinet|saxophone|sax|"
        "trumpet|trombone|ukulele|harp|harmonica|accordion|oboe|banjo|mandolin|keyboard|钢琴|吉他|小提琴|大提琴|"
        "中提琴|古筝|古琴|二胡|琵琶|笛子|架子鼓|长笛|萨克斯|小号|口琴|手风琴|竖琴|单簧管|贝斯",
        "sport": "football|basketball|baseball|volleyball|badminton|table tennis|ping pong|pickleball|"
        "squash|golf|hockey|rugby|cricket|swimming|running|cycling|climbing|bouldering|yoga|pilates|boxing|karate|"
        "judo|taekwondo|fencing|skiing|snowboarding|surfing|rowing|kayaking|triathlon|crossfit|jogging|游泳|"
        "篮球|足球|羽毛球|乒乓球|网球|排球|瑜伽|骑行|滑雪|登山|拳击|跳绳|马拉松|高尔夫|冲浪|滑板|太极|太极拳|"
        "击剑|潜水|台球|保龄球|壁球|橄榄球|棒球|冰球|普拉提|跆拳道|柔道|空手道|飞盘|徒步",
        "hobby": "photography|fishing|gardening|painting|drawing|knitting|cooking|baking|hiking|camping|chess|"
        "gaming|video games|board games|woodworking|pottery|birdwatching|traveling|travelling|dancing|singing|"
        "摄影|钓鱼|画画|绘画|书法|园艺|烘焙|做饭|下棋|围棋|象棋|旅游|旅行|爬山|露营|唱歌|跳舞|手工|编织|"
        "看书|阅读|打游戏|玩游戏|追剧|看电影|写作|集邮|养花|插花|剪纸|魔方|桌游|剧本杀",
        "drink": "latte|espresso|americano|cappuccino|flat white|mocha|macchiato|cold brew|tea|matcha|chai|"
        "kombucha|smoothie|juice|soda|cola|coke|milk|hot chocolate|beer|wine|whisky|whiskey|sake|咖啡|拿铁|美式|"
        "摩卡|卡布奇诺|奶茶|果汁|可乐|牛奶|豆浆|啤酒|红酒|白酒|黄酒|气泡水|苏打水|酸奶|柠檬水|绿茶|红茶",
        "tea": "普洱|龙井|西湖龙井|碧螺春|大红袍|毛尖|信阳毛尖|金骏眉|正山小种|白毫银针|六安瓜片|乌龙|"
        "乌龙茶|茉莉花茶|单丛|凤凰单丛|滇红|祁门红茶|白茶|黑茶|普洱茶|铁观音茶",
        "car": "toyota|honda|bmw|audi|mercedes|mercedes-benz|benz|volkswagen|vw|ford|chevrolet|chevy|subaru|"
        "mazda|nissan|hyundai|kia|volvo|porsche|lexus|jeep|byd|nio|xpeng|rivian|polestar|prius|civic|corolla|camry|"
        "丰田|本田|宝马|奥迪|奔驰|特斯拉|比亚迪|蔚来|理想|小鹏|吉利|长城|哈弗|红旗|五菱|领克|极氪|问界|别克|"
        "雪佛兰|福特|日产|马自达|现代|起亚|沃尔沃|保时捷|雷克萨斯|凯迪拉克|路虎|速腾|迈腾|朗逸|卡罗拉|凯美瑞|雅阁|思域",
        "smartphone": "galaxy|oneplus|vivo|xiaomi|redmi|huawei|honor|nokia|motorola|nothing phone|"
        "华为|荣耀|小米|红米|一加|魅族|苹果手机",
        "laptop": "thinkpad|macbook|macbook pro|xps|surface laptop|zenbook|vivobook|chromebook|legion|"
        "matebook|alienware|razer blade|framework laptop|拯救者|小新",
        "dog_breed": "labrador|labrador retriever|lab|poodle|corgi|husky|"
        "shiba inu|shiba|german shepherd|dachshund|bulldog|french bulldog|pug|chihuahua|samoyed|greyhound|"
        "boxer|rottweiler|schnauzer|maltese|shih tzu|doberman|柯基|哈士奇|金毛|拉布拉多|泰迪|柴犬|边牧|萨摩耶|比格|"
        "贵宾|德牧|法斗|博美|雪纳瑞|马尔济斯|中华田园犬",
        "pet": "dog|puppy|kitten|hamster|rabbit|bunny|turtle|tortoise|goldfish|fish|"
        "guinea pig|bird|"
        "budgie|ferret|gecko|snake|lizard|hedgehog|chinchilla|猫|小猫|猫咪|狗|小狗|狗狗|兔子|乌龟|金鱼|"
        "鱼|龙猫|刺猬|蜥蜴|蛇|鸟|八哥|布偶|布偶猫|英短|美短|橘猫|狸花猫",
        "book_genre": "sci-fi|science fiction|fantasy|mystery|mysteries|thrillers|thriller|romance|horror|"
        "non-fiction|nonfiction|history|biographies|poetry|manga|comics|literary fiction|"
        "科幻|奇幻|推理|悬疑|言情|武侠|历史",
        "cuisine": "italian|mexican|japanese|chinese|indian|korean|vietnamese|french|greek|spanish|"
        "lebanese|turkish|sichuan|cantonese|middle eastern|mediterranean|peruvian|brazilian|moroccan",
        "music": "lofi|jazz|classical|rock|hip hop|hip-hop|rap|pop|k-pop|edm|techno|house|metal|blues|folk|"
        "country|r&b|soul|indie|ambient|摇滚|爵士|古典|流行|民谣|说唱|电子乐|轻音乐",
        "company": "腾讯|阿里|阿里巴巴|百度|字节|字节跳动|华为|小米|美团|京东|拼多多|滴滴|快手|携程|蚂蚁|微软|"
        "谷歌|苹果|亚马逊|联想|中兴|大疆|比亚迪|宁德时代|招商银行|工商银行|建设银行|中国银行|农业银行",
        "city": "北京|重庆|广州|深圳|南京|苏州|成都|武汉|西安|厦门|青岛|大连|长沙|郑州|济南|合肥|"
        "福州|昆明|无锡|东莞|佛山|沈阳|哈尔滨|长春|南昌|贵阳|南宁|石家庄|太原|兰州|海口|三亚|珠海|温州|绍兴|"
        "常州|嘉兴|金华|台州|泉州|烟台|徐州|扬州|香港|澳门|台北|乌鲁木齐|拉萨|呼和浩特|银川|西宁|东京|大阪|首尔|"
        "新加坡|伦敦|纽约|巴黎|悉尼",
        "diet": "vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|paleo|素食者|素食主义者|吃全素|吃斋",
        "condition": "asthma|diabetes|eczema|psoriasis|migraines|migraine|epilepsy|adhd|autism|anxiety|depression|"
        "insomnia|ibs|gerd|acid reflux|high blood pressure|hypertension|high cholesterol|sleep apnea|gout|lupus|"
        "crohn's|celiac disease|coeliac disease|tinnitus|vertigo|long covid|pcos|endometriosis|glaucoma|cataracts|"
        "hay fever|rosacea|hemophilia|dyslexia|ptsd|ocd|哮喘|高血压|低血压|高血脂|高血糖|贫血|痛风|失眠|抑郁|焦虑|"
        "湿疹|偏头痛|鼻窦炎|近视|弱视|色弱|色盲",
        "occupation": "developer|programmer|nurse|doctor|physician|surgeon|dentist|teacher|professor|"
        "lecturer|tutor|architect|designer|scientist|researcher|manager|director|consultant|accountant|"
        "lawyer|attorney|paralegal|pharmacist|therapist|psychologist|chef|cook|baker|barista|bartender|"
        "waiter|waitress|writer|author|journalist|photographer|artist|musician|pilot|driver|mechanic|"
        "electrician|plumber|carpenter|farmer|student|intern|officer|firefighter|paramedic|vet|veterinarian|"
        "librarian|cashier|clerk|recruiter|founder|ceo|cto|entrepreneur|freelancer|administrator|technician|"
        "specialist|coordinator|assistant|broker|banker|trader|economist|translator|interpreter|actor|actress|"
        "dancer|singer|coach|trainer|instructor|caregiver|secretary|receptionist|statistician|physicist|chemist|"
        "biologist|producer|animator|illustrator|retiree|homemaker|counselor|social worker|midwife|dietitian|"
        "师|员|医生|护士|老师|教师|教授|律师|会计|司机|总监|主管|厨师|警察|作家|记者|研究员|"
        "顾问|专员|销售|店长|老板|学生|研究生|博士|公务员|军人|农民|主播|演员|模特|导演|画家|歌手|保安|"
        "客服|运营|翻译|秘书|助理|实习生|创业者|自由职业者|前端|测试|保姆|月嫂|科学家|工人|空姐",
    }.items()
}
NOT_OCCUPATION = _terms("会员|党员|团员|成员|人员|动员|演员表")
CITY_SUFFIX = re.compile(r"[市州]$")
ORG_SUFFIX = re.compile(
    r"(?:\b(?:Inc|Corp|Corporation|LLC|Ltd|Labs?|Analytics|Robotics|Technologies|Systems|Software|Group|Bank|"
    r"University|College|Hospital|Studios?|Partners|Capital|Health|Media|AI)\.?$)|(?:公司|集团|银行|科技|医院|大学|学院|研究所)$"
)
# Which attribute a lexicon implies, and how a value is matched: "=" whole value, ">" prefix, "<" suffix.
VALUE_RULES: tuple[tuple[str, str, str], ...] = (
    ("editor", "=", "editor"), ("programming_language", "=", "programming_language"), ("tea", ">", "tea"),
    ("drink", "<", "drink"), ("car", ">", "car"), ("smartphone", ">", "smartphone"), ("laptop", ">", "laptop"),
    ("instrument", "<", "instrument"), ("sport", "<", "sport"), ("hobby", "=", "hobby"),
    ("book_genre", "=", "book_genre"), ("music", "<", "music"), ("pet", "<", "pet"), ("language", "=", "language"),
    ("diet", "=", "diet"),
)  # fmt: skip
NOUN_ATTRIBUTES: dict[str, str] = {
    "e-mail": "email", "email address": "email", "邮箱": "email",
    "phone number": "phone", "number": "phone", "cell": "phone", "mobile": "phone", "手机号码": "phone",
    "电话": "phone", "电话号码": "phone", "phone": "smartphone", "手机": "smartphone",
    "id number": "id_number", "laptop": "laptop", "电脑": "laptop",
    "笔记本": "laptop", "native language": "native_language", "mother tongue": "native_language",
    "乐队": "favorite_band", "food": "food", "菜": "cuisine",
    "movie": "favorite_movie", "film": "favorite_movie", "book": "favorite_book",
    "书": "favorite_book", "tea": "tea", "名字": "name", "name": "name", "生日": "birthday", "birthday": "birthday",
    "address": "address", "地址": "address", "住址": "address", "车": "car", "car": "car", "运动": "sport",
    "sport": "sport", "drink": "drink", "饮料": "drink", "ide": "editor",
    "歌手": "favorite_singer", "singer": "favorite_singer", "颜色": "favorite_color", "color": "favorite_color",
    "colour": "favorite_color", "game": "favorite_game", "专业": "major", "major": "major",
}  # fmt: skip
EN_RELATIONS = frozenset(form.casefold() for r in RELATIONS for form in r.en)
"""Relation words; ``-in-law`` may follow any of them ("my brother-in-law Mark")."""
ZH_RELATIONS: dict[str, tuple[str, str]] = {
    zh: (r.key, formal or zh) for r in RELATIONS for zh, _, formal in (item.partition("=") for item in r.zh)
}
"""Chinese relation word -> (English relation for the entity key, formal word for content)."""
ZH_MY = r"我(?:的|家|[那这]个|们(?:[\u4e00-\u9fff]{1,2}的|的)?)?"
"""The speaker as the one a Chinese relation word is relative to: 我的, 我家, 我那个, 我们组的 (同事)."""


class Concept(NamedTuple):
    """What a habit verb says about its object: the slot, when no lexicon names the object more closely."""

    attribute: str
    lexicons: tuple[str, ...]
    """Attributes a lexicon may give the object instead (``play`` + "cello" -> ``instrument``)."""
    cardinality: str
    kind: str
    known_only: bool = False
    """The verb means other things too (开 drives, opens, starts: "开了个会员"): only a lexicon's object counts."""


# Verbs of use and habit, by concept: "I play X" / "我玩X" both give the slot of ``play``. A retraction
# ("I no longer play X", "我不玩X了") uses the same concept, so it lands on the slot it retracts.
VERB_CONCEPTS: dict[str, Concept] = {
    "use": Concept("uses", ("editor", "programming_language", "smartphone", "laptop"), "set", "preference"),
    "drive": Concept("car", ("car",), "single", "fact"),
    "drive_or_open": Concept("car", ("car",), "single", "fact", known_only=True),
    "ride": Concept("rides", (), "set", "fact"),
    "wear": Concept("wears", (), "set", "fact"),
    "play": Concept("plays", ("instrument", "sport", "hobby"), "set", "preference"),
    "play_music": Concept("instrument", ("instrument",), "set", "profile"),
    "play_sport": Concept("sport", ("sport", "hobby"), "set", "preference"),
    "drink": Concept("drink", ("tea", "drink"), "single", "preference"),
    "eat": Concept("eats", (), "set", "preference"),
    "read": Concept("reads", ("book_genre",), "set", "preference"),
    "watch": Concept("watches", (), "set", "preference"),
    "listen": Concept("listens_to", ("music",), "set", "preference"),
    "speak": Concept("language", ("language",), "set", "profile"),
    "collect": Concept("collection", (), "set", "preference"),
    "grow": Concept("grows", (), "set", "fact"),
    "take": Concept("takes", (), "set", "profile"),
    "write": Concept("writes", ("programming_language",), "set", "preference"),
    "smoke": Concept("smokes", (), "single", "profile"),
    "learn": Concept("learning", ("language",), "set", "profile"),
    "practice": Concept("practices", ("sport", "instrument"), "set", "preference"),
    "volunteer": Concept("volunteering", (), "set", "fact"),
    "keep": Concept("keeps", ("pet",), "set", "fact"),
}
EN_VERBS: dict[str, str] = {
    "use": "use", "am using": "use", "have been using": "use", "rely on": "use", "stick with": "use",
    "code in": "write", "program in": "write", "drive": "drive", "ride": "ride",
    "wear": "wear", "play": "play", "drink": "drink", "eat": "eat", "read": "read", "watch": "watch",
    "listen to": "listen", "speak": "speak", "collect": "collect", "grow": "grow", "take": "take",
    "write": "write", "smoke": "smoke", "learn": "learn", "study": "learn", "practice": "practice",
    "practise": "practice", "volunteer at": "volunteer", "volunteer with": "volunteer", "volunteer for": "volunteer",
}  # fmt: skip
"""English verb (base form, after the subject) -> concept."""
ZH_MEASURE = "[个辆只台部条位家件款把双套]"
"""Chinese measure words that start a noun phrase ("一辆", "台"): a thing is named after them."""
ZH_TOPIC_VERBS = "[用开穿戴骑住吃喝听看读养种玩]"
"""One-character verbs of a Chinese topic and comment ("手机用的是 X", "车开的是 X")."""
ZH_VERBS: dict[str, str] = {
    "用": "use", "开": "drive_or_open", "骑": "ride", "穿": "wear", "戴": "wear", "玩": "play", "打": "play_sport",
    "踢": "play_sport", "弹": "play_music", "拉": "play_music", "喝": "drink", "吃": "eat", "读": "read", "追": "watch",
    "听": "listen", "说": "speak", "讲": "speak", "收集": "collect", "收藏": "collect", "种": "grow", "写": "write",
    "抽": "smoke", "学习": "learn", "学": "learn", "练习": "practice", "练": "practice", "吹": "play_music",
    "养": "keep", "服用": "take",
}  # fmt: skip
"""Chinese verb -> concept."""


def is_language(value: str) -> bool:
    """A language by its name, or by a Chinese language ending (日语, 闽南话, 英文)."""
    return is_term("language", value) or bool(re.fullmatch(r"[\u4e00-\u9fff]{1,4}(?:语|话|文)", value.strip()))


CONDITION_ENDINGS = (
    "itis", "osis", "emia", "aemia", "pathy", "algia", "diabetes",
    "病", "症", "征", "炎", "癌", "瘤", "结石", "息肉", "不耐受", "突出",
)  # fmt: skip
"""Endings of a health condition's name: medical suffixes (tendinitis, scoliosis) and Chinese disease words (胆结石)."""
MEDICINE_STEMS = (
    "azole", "tidine", "statin", "pril", "sartan", "olol", "dipine", "cillin", "mycin", "cycline", "floxacin",
    "lukast", "formin", "gliptin", "gliflozin", "afil", "triptan", "setron", "azepam", "zolam", "oxetine", "opram",
    "traline", "tadine", "izine", "olone", "parin", "farin", "xaban", "gatran", "profen", "coxib", "dronate", "tinib",
    "thyroxine", "grel", "semide", "thiazide", "codone", "umab", "ximab", "zumab", "ovir",
)  # fmt: skip
"""The WHO's INN stems that end a generic drug name (atorvastatin, losartan, omeprazole, metoprolol...)."""
MEDICINE_ENDINGS_ZH = (
    "他汀", "沙坦", "普利", "洛尔", "地平", "拉唑", "替丁", "霉素", "西林", "沙星", "洛芬", "格雷", "双胍", "列汀",
    "胰岛素", "甲状腺素", "钠片", "肠溶片", "缓释片", "控释片", "含片", "泡腾片", "胶囊", "颗粒", "口服液", "滴丸",
)  # fmt: skip
"""Chinese drug names transliterate the same stems (他汀, 沙坦, 拉唑, 洛尔) or end in a dosage form (肠溶片, 胶囊)."""


def alternation(words: Iterable[str]) -> str:
    """A regex group matching any of ``words`` literally, the longest first ("沙坦" before "坦")."""
    return "(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + ")"


_CONDITION_FORM = re.compile(f"(?P<end>{alternation(CONDITION_ENDINGS)})$", re.IGNORECASE)
_MEDICINE_FORM = re.compile(
    rf"(?:[a-z]{{2,}}(?P<stem>{alternation(MEDICINE_STEMS)})|\b(?P<word>insulin))$"
    rf"|(?P<zh>{alternation(MEDICINE_ENDINGS_ZH)})$",
    re.IGNORECASE,
)


def medicine_form(value: str) -> str | None:
    """The ending that makes ``value`` a medicine's name (``"statin"`` for atorvastatin 20 mg), dose left off."""
    v = re.sub(r"\s*\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|毫克|微克)$", "", value.strip(), flags=re.IGNORECASE)
    m = _MEDICINE_FORM.search(v)
    return m.group(m.lastgroup or 0).casefold() if m and len(v.split()) <= 3 else None


def condition_form(value: str) -> str | None:
    """The ending that makes ``value`` a health condition's name (``"osis"`` for scoliosis, ``"结石"`` for 胆结石)."""
    v = value.strip()
    m = _CONDITION_FORM.search(v)
    return m.group("end").casefold() if m and len(v.split()) <= 4 else None


def is_medicine(value: str) -> bool:
    """A medicine by the form of its generic name or dosage (atorvastatin, 氯沙坦, 左甲状腺素钠片), dose left off."""
    return medicine_form(value) is not None


def is_condition(value: str) -> bool:
    """A health condition by its name, or by the form of its last word (tendinitis, scoliosis, 胆结石, 颈椎病)."""
    return is_term("condition", value.strip(), "<") or condition_form(value) is not None


def concept_attribute(concept: str, value: str) -> tuple[str, str] | None:
    """``(attribute, cardinality)`` of ``value`` as the object of a verb of ``concept`` (``None``: "我说实话")."""
    spec = VERB_CONCEPTS[concept]
    if concept in ("learn", "speak") and is_language(value):
        return ("learning_language" if concept == "learn" else "language"), ""
    if concept == "speak" and re.fullmatch(r"[A-Z][a-z]{2,}", value.strip()):
        return "language", ""  # what one speaks, named by a proper noun, is a language ("I speak Tagalog")
    if concept == "speak":
        return None
    if concept in ("eat", "use") and is_medicine(value):
        return "takes", ""  # "我每天吃阿托伐他汀": a medicine taken, not a food
    if found := (lookup(value, spec.lexicons) if spec.lexicons else None):
        return found[0], ""
    return None if spec.known_only else (spec.attribute, spec.cardinality)


# Pinyin for common given-name characters, so "我老婆小芳" becomes the entity `wife_fang`. Not pypinyin: it
# agrees on 211 of these 212 characters, but its first use costs ~0.4 s and ~58 MB resident (its phrase table).
_PINYIN: dict[str, str] = {
    ch: py
    for py, chars in (
        item.split(":")
        for item in (
            "fang:芳方房 yun:云芸韵 le:乐 duo:朵 wen:雯文 ming:明铭 hua:华 li:丽李莉俐力立 wei:伟薇维 jing:静晶婧靖京 "
            "min:敏 qiang:强 lei:磊蕾雷 jun:军君俊 yang:洋阳杨 yong:勇 yan:艳燕颜妍岩 jie:杰洁婕 juan:娟 tao:涛 "
            "chao:超 xiu:秀 xia:霞夏 ping:平萍 gang:刚 gui:桂 ying:英颖莹 ling:玲灵 mei:梅美 lan:兰岚蓝 hong:红宏鸿 "
            "na:娜 ting:婷 xue:雪 lin:琳林霖 hui:慧辉惠 jia:佳嘉家 xin:欣新鑫心 yi:怡一依艺怡宜 wan:婉 qian:倩 "
            "yao:瑶 lu:璐露 yue:悦月 tong:彤 meng:萌梦 xing:星 chen:晨陈 peng:鹏 fei:飞菲 hao:浩 yu:宇雨玉语瑜 "
            "xuan:轩萱 bo:博波 bin:斌 kai:凯 feng:峰锋 jian:健 liang:亮 long:龙 dong:东冬 hai:海 ning:宁 an:安 "
            "kang:康 xiao:晓 bao:宝 bei:贝 tian:甜天田 guo:果国 hu:虎 qing:青清晴 qi:琪琦淇奇 qin:琴 qiu:秋 "
            "chun:春 lian:莲 ju:菊 rong:蓉荣 zhen:珍 zhu:珠 zhi:志智 zi:子紫梓 han:涵晗韩 si:思斯 shu:舒书淑 "
            "ran:然冉 rui:瑞蕊 dan:丹 fan:凡帆 wang:王 zhang:张 liu:刘 zhao:赵 wu:吴 zhou:周 xu:徐许 sun:孙 "
            "ma:马 he:何 gao:高 luo:罗 zheng:郑 liang:梁 xie:谢 song:宋 tang:唐 xuan:宣 ni:妮倪 niu:妞牛 "
            "ya:雅亚 hao:豪 tuan:团 dou:豆 mao:毛 qiao:乔巧 shan:珊山 ke:可 xi:茜熙希 da:大 er:二"
        ).split()
    )
    for ch in chars
}


def is_term(lex: str, value: str, mode: str = "=") -> bool:
    """Whether ``value`` is in lexicon ``lex``: ``=`` whole value, ``<`` ends with, ``>`` starts with a term."""
    v = normalize_value(value)
    terms = LEX[lex]
    if v in terms:
        return True
    if mode not in ("<", ">"):
        return False
    words = v.split()
    edges = (words[-1:], words[-2:]) if mode == "<" else (words[:1], words[:2])  # the last / first one or two words
    at_edge = v.endswith if mode == "<" else v.startswith
    return any(" ".join(w) in terms for w in edges if w) or any(at_edge(t) for t in terms if CJK.search(t))


def lookup(value: str, attributes: Sequence[str] | None = None) -> tuple[str, str] | None:
    """The ``(attribute, value)`` a lexicon implies for ``value``, limited to ``attributes``."""
    for lex, mode, attr in VALUE_RULES:
        if (attributes is None or attr in attributes) and is_term(lex, value, mode):
            return attr, value
    return None


_BROADER: dict[str, frozenset[str]] = {
    "hobby": frozenset({"sport", "instrument", "music"}),
    "drink": frozenset({"tea"}),
}
"""Classes whose values may be named as each other's: a sport or an instrument can be a hobby, a tea a drink."""


def misfiled(attribute: str | None, value: str | None, *, named: bool = False) -> str | None:
    """The attribute a lexicon files ``value`` under when ``attribute`` is a lexicon class that does not hold it.

    A small model copies its prompt's example slot ("editor" for "picked up the ukulele"): a value of one word
    class under another class's name is the other class's. Under a broader class ("hobby" for an instrument) it
    is its own class too, as the rules file it, unless the user's words ``named`` the broader one ("my hobby
    is…"). A value no lexicon knows stays where it was put.

    >>> misfiled("editor", "ukulele"), misfiled("editor", "Cursor")
    ('instrument', None)
    >>> misfiled("hobby", "badminton"), misfiled("hobby", "badminton", named=True), misfiled("tea", "绿茶")
    ('sport', None, None)
    """
    own = next(((lex, mode) for lex, mode, attr in VALUE_RULES if attr == attribute), None)
    if own is None or not value or is_term(own[0], value, own[1]):
        return None
    found = lookup(value)  # never ``attribute`` itself: its own lexicon was just checked
    if found is None or attribute in _BROADER.get(found[0], ()):
        return None
    return None if named and found[0] in _BROADER.get(attribute or "", ()) else found[0]


def romanize(name: str) -> str:
    """Pinyin for a Chinese given name, diminutive prefix dropped ("小芳" -> "fang"); unknown characters stay."""
    core = name[1:] if len(name) == 2 and name[0] in DIMINUTIVES else name
    letters = [_PINYIN.get(ch, "") for ch in core]
    return "".join(letters) if all(letters) else core


def says_whole(value: str, text: str) -> bool:
    """Whether ``text`` says ``value`` (two characters at least), a Latin value as whole words, case aside."""
    if len(value) < 2:
        return False
    return re.search(whole_words(value), text, re.IGNORECASE) is not None


def whole_words(value: str) -> str:
    """A pattern for ``value`` as said: a Latin value as whole words, a Chinese one anywhere."""
    return r"(?<![^\W_])" + re.escape(value) + r"(?![^\W_])" if value.isascii() else re.escape(value)


def chinese_spans(text: str) -> list[str]:
    """Every run of three, two or one Chinese characters in ``text``, longest first: where a given name may stand."""
    runs = (text[i : i + n] for n in (3, 2, 1) for i in range(len(text) - n + 1))
    return [w for w in runs if all(CJK.match(ch) for ch in w)]


def _id_form(text: str) -> str:
    return re.sub(r"[\s-]+", "_", normalize_value(text))


_KIN_PINYIN: dict[str, str] = dict(
    zip(
        "丈上事亲人伯伴侄侣儿兄公友双发叔司同哥堂外太夫女奶好妇妈妹妻姐姑姥姨婆婚婶媳学孩室对导小居岳师弟教朋未板母爱父爷"
        "爸爹甥男练老舅舍蜜表象邻闺队阿领",
        (
            "zhang shang shi qin ren bo ban zhi lv er xiong gong you shuang fa shu si tong ge tang wai tai fu nv "
            "nai hao fu ma mei qi jie gu lao yi po hun shen xi xue hai shi dui dao xiao ju yue shi di jiao peng wei "
            "ban mu ai fu ye ba die sheng nan lian lao jiu she mi biao xiang lin gui dui a ling"
        ).split(),
        strict=True,
    )
)
"""Pinyin of the characters of the Chinese relation words (a closed class) that ``_PINYIN`` lacks: an id a model
wrote in pinyin ("shushu", "popo") is the relation it spells."""


def _pinyin_forms(word: str) -> set[str]:
    """Ids that spell a Chinese relation word of two characters or more in pinyin.

    叔叔 is ``shushu``, and a doubled word with its place among siblings (三叔) ``sanshu``; one character (姐, 妈)
    spells too many names.
    """
    syllables = [py for ch in word if (py := _KIN_PINYIN.get(ch) or _PINYIN.get(ch))]
    if len(word) < 2 or len(syllables) < len(word):
        return set()
    forms = {"".join(syllables)}
    if word[0] == word[1]:
        forms |= {rank + syllables[0] for rank in ("er", "san", "si", "wu")}
    return forms | {f.replace("nv", "nu") for f in forms}


_RELATION_KEYS = sorted(
    {
        *((_id_form(w), r.key) for r in RELATIONS for w in r.words),
        *((form, r.key) for r in RELATIONS for w in r.words if CJK.search(w) for form in _pinyin_forms(w)),
    },
    key=lambda p: -len(p[0]),
)
"""``(word as an id, relation key)``, longest word first; Chinese words in pinyin too."""
_OWNER = re.compile(r"^(?:the_)?(?:user'?s|users|my|our|我的|我家|我|用户的?)_?")


def canonical_entity(entity: str | None) -> str | None:
    """One id per person, whatever word named them; an id that is no relation word is kept as it is.

    ``老妈`` and ``mom`` are ``mother``, ``表妹晓雯`` is ``cousin_xiaowen``, "my sister Kasia" is ``sister_kasia``.
    """
    if entity is None or normalize_value(entity) in SELF_ENTITIES:
        return entity
    text = _id_form(entity)
    text = _OWNER.sub("", text) or text
    for form, key in _RELATION_KEYS:
        if text == form:
            return key
        rest = text[len(form) :] if text.startswith(form) else ""
        if rest.startswith("_") or (rest and not form.isascii()):
            return f"{key}_{romanize(rest.strip('_')).casefold()}"
    return entity
