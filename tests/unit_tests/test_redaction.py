from __future__ import annotations

import pytest

from langchain_lifecycle_memory.write.redaction import (
    PII_KINDS,
    PIIMatch,
    Redactor,
    contains_pii,
    id_checksum_ok,
    redact,
)

POSITIVES: list[tuple[str, list[tuple[str, str]]]] = [
    ("我的手机号是 13761245093，有急事打这个。", [("cn_mobile", "13761245093")]),
    ("电话：+86 137 6124 5093", [("cn_mobile", "+86 137 6124 5093")]),
    ("打我手机139-1234-5678就行", [("cn_mobile", "139-1234-5678")]),
    ("Call me on 15800001111 tomorrow.", [("cn_mobile", "15800001111")]),
    ("联系方式8613761245093", [("cn_mobile", "8613761245093")]),
    ("My UK number is +44 20 7946 0958.", [("phone", "+44 20 7946 0958")]),
    ("Reach me at +1 (415) 555-0132 after 6pm.", [("phone", "+1 (415) 555-0132")]),
    ("东京办公室电话 +81-3-1234-5678", [("phone", "+81-3-1234-5678")]),
    (
        "My email is dana.whitfield@example.com if you need to send me anything.",
        [("email", "dana.whitfield@example.com")],
    ),
    ("My work email is kenji.mori@example.org.", [("email", "kenji.mori@example.org")]),
    ("邮箱是zhang_san+memo@mail.qq.com，谢谢", [("email", "zhang_san+memo@mail.qq.com")]),
    ("身份证号 110101199003074514 帮我填表", [("cn_id", "110101199003074514")]),
    ("ID: 44030419851231002X", [("cn_id", "44030419851231002X")]),
    ("我的身份证号是 110101199003074518，帮我填表的时候用。", [("cn_id", "110101199003074518")]),
    ("卡号 6222 0212 3456 7890 128 是工资卡", [("bank_card", "6222 0212 3456 7890 128")]),
    ("Visa 4111-1111-1111-1111 expires soon", [("bank_card", "4111-1111-1111-1111")]),
    ("Amex 3782 822463 10005 on file", [("bank_card", "3782 822463 10005")]),
    ("招商银行卡6228480012345671", [("bank_card", "6228480012345671")]),
    ("服务器地址是192.168.1.10。", [("ipv4", "192.168.1.10")]),
    ("My home IP is 8.8.4.4, weird I know.", [("ipv4", "8.8.4.4")]),
    ("IPv6 地址 2001:db8::8a2e:370:7334 无法访问", [("ipv6", "2001:db8::8a2e:370:7334")]),
    ("link-local fe80::1ff:fe23:4567:890a here", [("ipv6", "fe80::1ff:fe23:4567:890a")]),
    (
        "Email 13761245093@163.com or call 13761245093",
        [("email", "13761245093@163.com"), ("cn_mobile", "13761245093")],
    ),
    (
        "张三，手机13912345678，邮箱 zs@example.cn，身份证310115200002291235",
        [("cn_mobile", "13912345678"), ("email", "zs@example.cn"), ("cn_id", "310115200002291235")],
    ),
]

NEGATIVES: list[str] = [
    "我是1990年出生的，2024年搬到了上海。",
    "这台电脑 ¥1999，那台 3,499元。",
    "It costs $12.50, or $1,299.99 for the pro plan.",
    "会议定在 2024-06-17 10:30，别迟到。",
    "The train leaves at 08:45:30 on 2024/06/17.",
    "Upgrade to v1.2.3 and Python 3.11.7 please.",
    "版本号 v10.0.19045.3803 已经安装",
    "我们订了 1200 件货，单价 35 元。",
    "邮编 100080，海淀区。",
    "编号 12345678901 不是手机号",
    "The order id is 10000000000 and quantity 250.",
    "她跑了 42.195 公里，用时 3:12:45。",
    "Pi is about 3.14159265358979, e about 2.71828.",
    "订单号 2024061712345678 已发货",
    "Temperature dropped to -12 and then +5 degrees.",
    "We grew revenue 12.5% to 1,234,567 dollars in 2023.",
    "Time stamp 1718600000000 ms since epoch.",
    "call std::vector::push_back and a::b in C++",
    "I wrote 4 + 12345678 on the whiteboard.",
    "Sum: 7 +12345678 = 12345685",
    "比分 3:2，第 89 分钟进球。",
    "My ratio is 16:9 and the MAC is 00:1A:2B:3C:4D:5E.",
    "身高 175cm 体重 68kg，鞋码 42。",
    "随便一个十八位数 123456789012345678 不是身份证",
    "Room 1203, floor 12, building 7.",
    "The code for my thesis is on GitLab 2, branch 14.",
]


@pytest.mark.parametrize(("text", "expected"), POSITIVES)
def test_each_positive_sentence_is_found(text: str, expected: list[tuple[str, str]]) -> None:
    found = redact(text, mode="keep", keep_originals=True).found
    assert [(m.kind, m.original) for m in found] == expected


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_numbers_are_not_pii(text: str) -> None:
    assert redact(text).text == text
    assert not contains_pii(text)


def test_precision_and_recall_are_perfect_on_the_test_set() -> None:
    assert len(POSITIVES) >= 20 and len(NEGATIVES) >= 20
    gold = {(i, kind, s) for i, (_, exp) in enumerate(POSITIVES) for kind, s in exp}
    sentences = [t for t, _ in POSITIVES] + NEGATIVES
    predicted = {
        (i, m.kind, m.original)
        for i, text in enumerate(sentences)
        for m in redact(text, mode="keep", keep_originals=True).found
    }
    true_pos = len(gold & predicted)
    assert true_pos / len(predicted) == 1.0
    assert true_pos / len(gold) == 1.0


def test_mask_replaces_with_labels() -> None:
    result = redact("手机13912345678，邮箱 zs@example.cn，IP 10.0.0.1")
    assert result.text == "手机[PHONE]，邮箱 [EMAIL]，IP [IP_ADDRESS]"
    assert result.kinds == {"cn_mobile", "email", "ipv4"}


def test_originals_are_not_kept_by_default() -> None:
    result = redact("My email is dana.whitfield@example.com")
    assert all(m.original is None for m in result.found)
    assert "dana.whitfield" not in result.model_dump_json()


def test_offsets_point_into_the_original_text() -> None:
    text = "邮箱 zs@example.cn 和 13912345678"
    for m in redact(text).found:
        assert text[m.start : m.end] in {"zs@example.cn", "13912345678"}


def test_drop_mode_removes_the_text_and_reports_it() -> None:
    result = redact("The user's email is dana.whitfield@example.com now", mode="drop")
    assert result.text == "The user's email is now"
    assert result.has_pii and result.found[0].kind == "email"


def test_keep_mode_only_reports() -> None:
    text = "我的手机号是 13761245093"
    result = redact(text, mode="keep")
    assert result.text == text
    assert [m.kind for m in result.found] == ["cn_mobile"]


def test_kinds_restrict_what_is_redacted() -> None:
    result = redact("mail dana@example.com or call 13761245093", kinds={"cn_mobile"})
    assert result.text == "mail dana@example.com or call [PHONE]"


def test_disabled_kind_protects_its_span() -> None:
    # The phone-shaped local part belongs to an email the caller chose to keep.
    assert redact("13761245093@163.com", kinds={"cn_mobile"}).text == "13761245093@163.com"


def test_unknown_kind_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="choose from"):
        redact("x", kinds={"passport"})


def test_public_scenario_id_fails_the_checksum_but_is_caught_by_context() -> None:
    assert not id_checksum_ok("110101199003074518")
    assert id_checksum_ok("110101199003074514")
    (match,) = redact("用户的身份证号是 110101199003074518").found
    assert match.kind == "cn_id" and match.validated is False
    assert not contains_pii("order 110101199003074518 shipped")


def test_id_with_impossible_birth_date_is_ignored() -> None:
    # 2023-02-30 does not exist even though the checksum is recomputed to pass.
    number = "11010120230230123"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    number += "10X98765432"[sum(int(c) * w for c, w in zip(number, weights, strict=True)) % 11]
    assert id_checksum_ok(number)
    assert not contains_pii(f"身份证 {number}")


def test_luhn_invalid_card_is_not_a_card() -> None:
    assert not contains_pii("卡号 6222 0212 3456 7890 123")


def test_ipv4_octets_over_255_are_not_addresses() -> None:
    assert not contains_pii("value 256.1.1.1 and 999.999.999.999")


def test_redactor_custom_mask_format() -> None:
    r = Redactor(mask_format="<{kind}>", kinds={"email", "cn_mobile"})
    assert r.redact("a@b.co 13761245093").text == "<email> <cn_mobile>"
    assert Redactor(labels={"email": "MAIL"}).mask_for("email") == "[MAIL]"


def test_redactor_rejects_a_broken_mask_format() -> None:
    with pytest.raises(ValueError, match="label"):
        Redactor(mask_format="[{name}]")


def test_match_model_and_kinds_are_public() -> None:
    assert set(PII_KINDS) == {"email", "cn_id", "cn_mobile", "phone", "bank_card", "ipv4", "ipv6", "secret"}
    assert PIIMatch(kind="email", start=0, end=3).original is None


# A credential is the value a credential noun is said to be, in either language, whatever unlocks it.
SECRETS = [
    ("The VeraCrypt recovery key for my external drive is 5519-2284-7730", "5519-2284-7730"),
    ("Tutanota backup codes: 66120-93417, keep them safe", "66120-93417"),
    ("My Known Traveler Number is 15820937, for the airline forms", "15820937"),
    ("花呗的 membership number 是 77801234", "77801234"),
    ("我爸的 credit card 号是 4000 0012 3456 7891，订酒店用", "4000 0012 3456 7891"),
    ("The Wi-Fi password is tulip-42, don't lose it.", "tulip-42"),
    ("PIN for the debit card: 4821", "4821"),
    ("I changed the gate code to 5521#.", "5521#"),
    ("Our staging API key is sk-live-abc123XYZ", "sk-live-abc123XYZ"),
    ("The password is 'bluebird'", "bluebird"),
    ("I set the locker combination to 12-34-56", "12-34-56"),
    ("the code on my shed padlock is 3381, I keep forgetting", "3381"),  # the noun before what it unlocks
    ("门禁密码改成了 0715#", "0715#"),
    ("我的支付宝支付密码是 880211", "880211"),
    ("验证码是 839201，五分钟内有效", "839201"),
    # code-switched: a noun in one language, its verb in the other
    ("店里 Wi-Fi 的密码 is Hazel&Moss55, 客人问就告诉他们。", "Hazel&Moss55"),
    ("The storage unit door code 是 3390#，别忘了。", "3390#"),
    # an identity document's or an account's number, after its noun
    ("My passport no. is K88231904, expires 2031.", "K88231904"),
    ("My ITIN is 912-70-1234 for the 1040.", "912-70-1234"),
    ("For the green card form, my A-number 是 A093355120。", "A093355120"),
    ("驾照号：B7712093，年底要换证。", "B7712093"),
    ("医保卡号 4403 1187 2260 9015，看病要用。", "4403 1187 2260 9015"),
    ("The routing number is 021000021 and the checking account number is 483920117.", "483920117"),
    ("My Medicare number is 7QK2-WR4-JD86 if the clinic asks.", "7QK2-WR4-JD86"),
    # a number named by an acronym, in either language
    ("My TFN number is 123 456 782, the accountant needs it.", "123 456 782"),
    ("报税要填 TFN no. 是 987 654 321。", "987 654 321"),
    ("Charge it to my Mastercard 5105 1051 0510 5101 please.", "5105 1051 0510 5101"),
    ("我的信用卡 6259 0731 4402 8815，下次订酒店用。", "6259 0731 4402 8815"),
    # a wallet's recovery phrase: a dozen plain words in a text that names one
    (
        "Keep my seed phrase safe for me: lemon quartz meadow tiger bronze silent oyster fabric candle nephew"
        " velvet orchid",
        "lemon quartz meadow tiger bronze silent oyster fabric candle nephew velvet orchid",
    ),
    ("助记词：river canvas ozone mirror plank shadow button glance vendor stable ripple humble", "river canvas"),
]
NOT_SECRETS = [
    "my password is written down somewhere",
    "I forgot my password again",
    "My password manager is 1Password",
    "the code is on GitHub",
    "dress code is casual",
    "passwords are a pain",
    "密码学是我的研究方向",
    "My passport number is in the blue folder in the top drawer.",
    "Order number 48213377 shipped yesterday.",
    "Room number 40512 is on the fourth floor.",
    "My visa expires in 2026, so I renew it next spring.",
    "I paid with my Amex yesterday, 300 dollars in all.",
    "My card number ends in 4421.",
    "I wrote my recovery phrase on a steel plate and keep it in the safe at my parents' place.",
    "She keeps twelve plain words on a card: apple river stone cloud maple pepper copper lantern violet marble"
    " ember willow, just a poem she likes.",
]


@pytest.mark.parametrize(("text", "value"), SECRETS)
def test_a_credential_said_to_be_a_value_is_masked(text: str, value: str) -> None:
    result = redact(text)
    assert value not in result.text
    assert "[SECRET]" in result.text
    assert result.kinds == {"secret"}


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_talk_about_credentials_without_one_is_left_alone(text: str) -> None:
    assert redact(text).text == text


def test_a_value_found_in_the_statement_is_masked_in_every_field() -> None:
    content, value, evidence = Redactor().redact_together(
        ["The user's Wi-Fi password is tulip-42.", "tulip-42", "wifi is tulip-42 btw"]
    )
    assert (content, value, evidence) == ("The user's Wi-Fi password is [SECRET].", "[SECRET]", "wifi is [SECRET] btw")
    assert Redactor(mode="keep").redact_together(["PIN: 4821", "4821"]) == ["PIN: 4821", "4821"]


@pytest.mark.parametrize(
    "text",
    [
        "export OPENAI_API_KEY=sk-proj-Qv7LmT2xR9bWc4NdHk8ZpFy3",
        "here's the deploy token for staging ghp_x8Kq2mVt7RbN4wLc9PzJ5sHd3Fg6Ty1",
    ],
)
def test_a_key_said_without_its_noun_is_masked_by_its_randomness(text: str) -> None:
    key = text.split()[-1].split("=")[-1]
    assert Redactor().redact(text).text == text.replace(key, "[SECRET]")


@pytest.mark.parametrize(
    "text",
    [
        "the file is quarterly-report-2024-final, send it to Ines",
        "the order id is 123e4567-e89b-12d3-a456-426614174000",
        "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fixed it",
        "internationalization2024 is the workshop's hashtag",
    ],
)
def test_long_names_and_ids_that_are_not_keys_stay(text: str) -> None:
    assert Redactor().redact(text).text == text
