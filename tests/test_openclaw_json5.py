"""The logic under `memory-cortex openclaw connect` (the command itself runs against a real OpenClaw in
integrations/openclaw/test/connect.test.ts): merging into a JSON5 file by editing its text, the
versions it accepts, the entry it writes, and how it reports changes."""

from __future__ import annotations

import pytest

from memory_cortex.openclaw.connect import DaemonAddress, describe_changes, plugin_entry, settings_added
from memory_cortex.openclaw.installation import node_is_supported
from memory_cortex.openclaw.json5_merge import Json5MergeError, load_json5, merge_json5

ENTRY = {"plugins": {"entries": {"memory-cortex": {"enabled": True, "config": {"userId": "sam"}}}}}


def test_a_merge_keeps_every_comment_and_untouched_line() -> None:
    text = (
        "// top comment\n"
        "{\n"
        "  // the gateway\n"
        "  gateway: { port: 18789 },  // trailing\n"
        "  plugins: {\n"
        "    entries: {\n"
        "      /* block */\n"
        "      'memory-cortex': { config: { middlewarePort: 8300 } },\n"
        "    },\n"
        "  },\n"
        "}\n"
    )
    result = merge_json5(text, ENTRY)
    for line in text.splitlines():
        if "memory-cortex" not in line:
            assert line in result.text.splitlines(), line
    assert load_json5(result.text) == {
        "gateway": {"port": 18789},
        "plugins": {
            "entries": {
                "memory-cortex": {"enabled": True, "config": {"userId": "sam", "middlewarePort": 8300}}
            }
        },
    }
    assert result.removed_duplicates == () and result.had_comments


def test_a_key_written_twice_is_left_once_the_one_json5_readers_use() -> None:
    text = '{\n  entries: {\n    "a": { x: 1 },\n    "a": { x: 2 },  // kept\n  },\n}\n'
    result = merge_json5(text, {"entries": {"a": {"y": 3}}})
    assert result.text.count('"a"') == 1 and "// kept" in result.text
    assert load_json5(result.text) == {"entries": {"a": {"x": 2, "y": 3}}}
    assert result.removed_duplicates == ("entries.a (line 3)",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", '{\n  "a": {\n    "b": 1\n  }\n}\n'),
        ("{}", '{ "a": {"b": 1} }'),
        ("{\n}", '{\n  "a": {\n    "b": 1\n  }\n}'),
        ("{ x: 1 }", '{ "a": {"b": 1}, x: 1 }'),
        ("{\n  x: 1,\n}", '{\n  "a": {\n    "b": 1\n  },\n  x: 1,\n}'),
        ("{ a: 5 }", '{ a: {"b": 1} }'),
    ],
)
def test_new_keys_follow_the_layout_of_their_object(text: str, expected: str) -> None:
    assert merge_json5(text, {"a": {"b": 1}}).text == expected


@pytest.mark.parametrize("text", ["{ plugins: ", "[1, 2]", '"text"'])
def test_what_is_not_a_json5_object_is_refused(text: str) -> None:
    with pytest.raises(Json5MergeError):
        merge_json5(text, ENTRY)


def test_the_node_versions_openclaw_runs_on() -> None:
    assert [node_is_supported(v) for v in ("v24.16.0", "v24.20.1", "v26.1.0", "v27.0.0")] == [True] * 4
    assert [node_is_supported(v) for v in ("v24.15.9", "v25.3.0", "v26.0.0", "v20.19.2", "", "x")] == [
        False
    ] * 6


def test_the_entry_names_this_daemon_and_its_owner() -> None:
    assert plugin_entry(DaemonAddress("127.0.0.1", 8431, None), "sam") == {
        "enabled": True,
        "hooks": {"allowConversationAccess": True},
        "config": {"middlewareHost": "127.0.0.1", "middlewarePort": 8431, "userId": "sam"},
    }
    remote = plugin_entry(DaemonAddress("192.168.1.20", 8300, "t0ken"), "ana")["config"]
    assert remote == {
        "middlewarePort": 8300,
        "userId": "ana",
        "middlewareHost": "192.168.1.20",
        "token": "t0ken",
    }


def test_crlf_files_stay_crlf_and_a_comment_before_a_duplicates_comma_goes_with_it() -> None:
    text = '{\r\n  // keep me\r\n  "m": { a: 1 } // old one\r\n  , "m": { a: 2 },\r\n}\r\n'
    result = merge_json5(text, {"m": {"b": 3}, "n": {"c": 4}})
    assert "\r\n" in result.text and "\n" not in result.text.replace("\r\n", "")
    assert "// keep me" in result.text and "// old one" not in result.text
    assert load_json5(result.text) == {"m": {"a": 2, "b": 3}, "n": {"c": 4}}


def test_changes_are_listed_by_path_with_the_token_masked() -> None:
    before = {"plugins": {"entries": {"memory-cortex": {"config": {"middlewarePort": 8300}}}}, "gone": 1}
    after = {
        "plugins": {"entries": {"memory-cortex": {"config": {"middlewarePort": 8431, "token": "t0ken"}}}}
    }
    assert describe_changes({"c": None}, {"c": {"token": "t0ken"}}) == [
        "c: null -> (an object)",
        "c.token: (unset) -> ********",
    ]
    assert describe_changes(before, after) == [
        "plugins.entries.memory-cortex.config.middlewarePort: 8300 -> 8431",
        "plugins.entries.memory-cortex.config.token: (unset) -> ********",
        "gone: 1 -> (unset)",
    ]
    assert settings_added(before, after) == {
        "plugins": {"entries": {"memory-cortex": {"config": {"middlewarePort": 8431, "token": "t0ken"}}}}
    }
