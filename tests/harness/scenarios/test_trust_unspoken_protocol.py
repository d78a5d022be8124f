"""An item of a protocol the runner never spoke fails. Before, a runner of one's own
that ignores ``context.protocol`` (and declares no ``@speaks``) got an item per protocol
under ``protocols: all``, each passing on the same Chat Completions requests: "8 passed"
for an app that speaks one protocol."""

from __future__ import annotations

import pytest

CHAT_ONLY = """
def run(context):
    reply = context.openai().chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": context.scenario.tagged_prompt()}]
    )
    return [{"type": "answer", "content": reply.choices[0].message.content}]
"""

SCENARIO = """runner: chat_app:run
protocols: [openai-chat, anthropic-messages]
prompt: Say hello
script: [{messages: [{text_message: {text: Hello.}}]}]
"""


def test_the_item_of_a_protocol_never_spoken_fails_saying_how_to_fix_it(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(chat_app=CHAT_ONLY)
    strict_pytester.syspathinsert()
    (strict_pytester.path / "scenarios").mkdir()
    (strict_pytester.path / "scenarios" / "hello.yaml").write_text(SCENARIO)
    result = strict_pytester.runpytest("scenarios", "--snapshot-update", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*hello.yaml::hello[[]openai-chat[]] PASSED*",
            "*hello.yaml::hello[[]anthropic-messages[]] FAILED*",
            "scenario 'hello' under anthropic-messages: the runner sent its requests in openai-chat, never in "
            "anthropic-messages, the protocol of this item. Speak context.protocol*@speaks('openai-chat')*",
        ]
    )
