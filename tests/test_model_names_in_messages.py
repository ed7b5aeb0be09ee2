"""Model names in messages: short and long lists, did-you-mean, the known names."""

from arena.core.words import did_you_mean, name_list, unknown


def test_name_list_short_and_long():
    assert name_list([]) == ""
    assert name_list(["a"]) == "a"
    assert name_list(["a", "b", "c"]) == "a, b and c"
    names = [f"m{i}" for i in range(14)]
    text = name_list(names)
    assert text.endswith("m9 and 4 more") and "m10" not in text


def test_did_you_mean_prefix_and_typo():
    known = ["gemini-2.5-pro", "o3-2025-04-16", "o4-mini-2025-04-16", "claude-opus-4"]
    assert did_you_mean("o3", known)[0] == "o3-2025-04-16"
    assert did_you_mean("gemini-2.5-po", known) == ["gemini-2.5-pro"]
    assert did_you_mean("zzz", known) == []


def test_unknown_lists_known_when_no_match():
    msg = unknown("category", "maths", ["math", "creative_writing", "if"])
    assert "did you mean math" in msg
    msg = unknown("category", "zzz", ["math", "if"])
    assert msg == "unknown category 'zzz'; known: math, if"
    msg = unknown("category", "maths", ["math", "if"], list_known=True)
    assert msg == "unknown category 'maths'; did you mean math?; known: math, if"
    assert unknown("category", "x", []) == "unknown category 'x'; there is no category yet"
