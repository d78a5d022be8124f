"""Chain context and the MCP formats: seed Groups H, K (export) and L, am7:// URIs."""

from __future__ import annotations

import asyncio
import operator
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.systems.chain import (
    Am7Uri,
    ChainExecutor,
    ChainPlan,
    McpContextBuilder,
    PlanExecutionError,
    StepStatus,
    chain_chat_history,
    filter_context,
    parse_context,
    restore_context,
    save_context,
)
from harness.systems.chain.mcp_context import McpContextBlock
from tests.harness.systems.chain.chain_support import Bench, answers, llm, step

# -- Group H: context -----------------------------------------------------------------


def test_h1_context_accumulates_across_step_types() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("Analyse", "Analysis: 2 models, census cited.", "Summary."),
            steps=[
                step(1, toolName="describeAllModels", outputName="modelList"),
                step(2, stepType="RAG_QUERY", ragQuery="population", outputName="citations"),
                llm(3, "Given models={{modelList}} and citations={{citations}}, analyze", outputName="analysis"),
                llm(4, "Summarize: {{analysis}}"),
            ],
        )
    )
    analyse, summarise = b.prompts()[0], b.prompts()[2]
    assert "models=olio.charPerson, data.data" in analyse and "am7://default/data.data/census" in analyse
    assert summarise == "Summarize: Analysis: 2 models, census cited."
    assert set(restore_context(done.context_blocks)) == {"modelList", "citations", "analysis"}


def test_h2_context_is_saved_and_a_new_executor_resumes_from_it() -> None:
    plan = ChainPlan(
        max_steps=2,
        plan_query=answers("q", "red, green"),
        steps=[
            step(1, toolName="describeAllModels", outputName="modelList"),
            llm(2, "List colours", outputName="colors"),
            llm(3, "Pick one of {{colors}} given {{modelList}}", outputName="pick"),
            step(4, toolName="describeAllModels"),
        ],
    )
    first = Bench().run(plan)
    assert first.context_blocks.startswith("<mcp:context")
    assert restore_context(first.context_blocks) == {"modelList": "olio.charPerson, data.data", "colors": "red, green"}
    # A new executor carries on where the saved plan stopped: done steps are not run again.
    b = Bench()
    resumed = b.run(first.model_copy(update={"max_steps": 10, "plan_query": answers("q", "green")}))
    assert [s.step_status for s in resumed.steps] == [StepStatus.COMPLETED] * 4
    assert b.prompts()[0].endswith("Pick one of red, green given olio.charPerson, data.data")
    assert resumed.total_executed_steps == 4


def test_h2_legacy_json_context_still_restores() -> None:
    assert restore_context('{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError, match="holds no <mcp:context> block"):
        restore_context("just text")


def test_h2_a_corrupt_saved_context_is_a_clear_error() -> None:
    with pytest.raises(PlanExecutionError, match="neither MCP context blocks nor a JSON object"):
        Bench().run(ChainPlan(context_blocks="{broken", steps=[step(1, toolName="describeAllModels")]))


def test_h3_a_missing_variable_is_never_silently_empty() -> None:
    for bad in (llm(1, "Use {{nonExistentVar}}"), step(1, stepType="RAG_QUERY", ragQuery="{{nonExistentVar}}")):
        b = Bench()
        with pytest.raises(PlanExecutionError, match=r"no \{\{nonExistentVar\}\}"):
            b.run(ChainPlan(plan_query=answers("q", "x"), steps=[bad]))
        assert b.bodies == []  # nothing reached the model with a hole in it


def test_h4_a_later_output_overwrites_the_same_name() -> None:
    done = Bench().run(
        ChainPlan(
            steps=[
                step(
                    1,
                    toolName="newQueryField",
                    inputs={"field": "a", "comparator": "EQ", "value": "1"},
                    outputName="result",
                ),
                step(
                    2,
                    toolName="newQueryField",
                    inputs={"field": "b", "comparator": "EQ", "value": "2"},
                    outputName="result",
                ),
                step(3, toolName="findPersons", inputs={"query": "{{result}}"}),
            ]
        )
    )
    assert done.output == ["person where b EQ 2"]


# -- Group K: the chain as chat history -----------------------------------------------


def test_k_chain_result_as_chat_history() -> None:
    done = Bench().run(
        ChainPlan(
            plan_query=answers("Tell me about bakers", "Cy bakes.", "Cy is the baker."),
            steps=[
                step(1, toolName="describeAllModels", outputName="models"),
                step(2, stepType="RAG_QUERY", ragQuery="baker bread", outputName="citations"),
                llm(3, "Who bakes?"),
                llm(4, "Summarise"),
            ],
        )
    )
    history = chain_chat_history(done)
    messages = history["chatHistory"]["messages"]
    assert messages[0] == {"role": "user", "content": "Tell me about bakers"}
    assert messages[-1] == {"role": "assistant", "content": "Cy is the baker."}
    steps = messages[1]["content"].splitlines()
    assert steps[0] == "Chain steps:"
    assert [line.split("] ")[0].split(" [")[1] for line in steps[1:]] == ["Tool", "RAG", "LLM", "LLM"]
    citations = parse_context(messages[2]["content"]).blocks
    assert citations and citations[0].data["results"][0]["uri"] == "am7://default/data.data/people"
    assert history["executed"] is True


def test_k_a_gated_chain_never_exports_the_denied_text_as_the_answer() -> None:
    from harness.systems.chain import Policy

    never = Policy.model_validate(
        {"name": "never", "rules": [{"patterns": [{"type": "expression", "check": "equals", "value": "-"}]}]}
    )
    done = Bench(policies=[never]).run(
        ChainPlan(
            plan_query=answers("q", "secret draft"), steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="never")]
        )
    )
    messages = chain_chat_history(done)["chatHistory"]["messages"]
    assert messages[-1] == {"role": "assistant", "content": "The chain was halted at step 2: policy 'never' denied it."}
    assert "[Gate] GATED" in messages[1]["content"]


# -- Group L: MCP context format -------------------------------------------------------


def test_l1_rag_output_is_mcp_context_blocks() -> None:
    done = Bench().run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="population")]))
    assert done.output.startswith('<mcp:context type="resource" uri="am7://vector/citations/')
    assert "--- BEGIN CITATIONS ---" not in done.output
    (block,) = parse_context(done.output).blocks
    assert block.schema == "urn:am7:vector:search-result" and block.ephemeral
    for result in block.data["results"]:
        Am7Uri.parse(result["uri"])
        assert {"score", "chunk", "sourceType"} <= set(result) and result["sourceType"] == "data.data"


def test_l2_llm_steps_receive_unquoted_context_as_mcp_blocks() -> None:
    b = Bench()
    b.run(
        ChainPlan(
            plan_query=answers("q", "Answer."),
            steps=[
                step(1, stepType="RAG_QUERY", ragQuery="population", outputName="citations"),
                step(2, toolName="describeAllModels", outputName="models"),
                llm(3, "Answer from the context above."),
            ],
        )
    )
    sent = b.prompts()[0]
    blocks = parse_context(sent).blocks
    assert [b.schema for b in blocks] == ["urn:am7:vector:search-result", "urn:am7:chain:step-output"]
    assert blocks[1].data == {
        "schema": "urn:am7:chain:step-output",
        "name": "models",
        "value": "olio.charPerson, data.data",
    }
    assert "--- CITATION ---" not in sent and sent.endswith("Answer from the context above.")


def test_l3_the_saved_context_is_one_block_per_name() -> None:
    done = Bench().run(
        ChainPlan(
            object_id="plan-7",
            steps=[
                step(1, toolName="describeAllModels", outputName="modelList"),
                step(
                    2,
                    toolName="newQueryField",
                    inputs={"field": "f", "comparator": "EQ", "value": "v"},
                    outputName="qf",
                ),
            ],
        )
    )
    blocks = parse_context(done.context_blocks).blocks
    assert [b.uri for b in blocks] == ["am7://chain/plan-7/context/modelList", "am7://chain/plan-7/context/qf"]
    assert blocks[1].data["value"] == {"field": "f", "comparator": "EQ", "value": "v"}


def test_l4_events_carry_the_plans_mcp_uri() -> None:
    b = Bench(organization="acme")
    b.run(ChainPlan(object_id="p1", steps=[step(1, toolName="describeAllModels")]))
    assert {e.mcp_context_uri for e in b.events} == {"am7://acme/tool.plan/p1"}


def test_l5_builder_and_parser_round_trip() -> None:
    text = (
        McpContextBuilder()
        .add_resource('am7://org/data.data/a"b', "urn:x", {"text": "ends </mcp:context> early?", "n": [1, 2]})
        .add_reasoning("thinking </mcp:context> about it")
        .build()
    )
    parsed = parse_context("Before.\n" + text + "\nAfter.")
    assert parsed.content == "Before.\n\nAfter."
    resource, reasoning = parsed.blocks
    assert resource.uri == 'am7://org/data.data/a"b'
    assert resource.data == {"schema": "urn:x", "text": "ends </mcp:context> early?", "n": [1, 2]}
    assert (reasoning.type, reasoning.data) == ("reasoning", "thinking </mcp:context> about it")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


# The names of ``[A-Za-z_]\w{0,8}`` (``\w`` as hypothesis's ``from_regex`` draws it: letters,
# digits, "_"), drawn as two choices rather than one a character: ``from_regex`` drawing
# each was about half of this test's CPU.
context_keys = st.builds(
    operator.add,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(alphabet=st.characters(categories=["L", "N"], include_characters="_"), max_size=8),
)


@given(st.dictionaries(context_keys, json_values, max_size=5))
def test_l5_any_json_context_survives_save_and_restore(context: dict[str, Any]) -> None:
    assert restore_context(save_context(context, "plan")) == context


def test_filter_hides_citations_and_reasoning_unless_asked() -> None:
    text = (
        "Paris is the capital."
        + McpContextBlock("reasoning", "the user asked about France").render()
        + McpContextBuilder()
        .add_resource("am7://vector/citations/x", "urn:am7:vector:search-result", {"results": []}, ephemeral=True)
        .build()
    )
    shown = filter_context(text)
    assert shown.content == "Paris is the capital."
    assert (len(shown.citations), len(shown.reasoning)) == (1, 1)
    assert "the user asked about France" in filter_context(text, show_reasoning=True).content


# -- am7:// URIs ----------------------------------------------------------------------


def test_am7_uris_build_and_parse() -> None:
    uri = Am7Uri("acme", "tool.plan", "42")
    assert str(uri) == "am7://acme/tool.plan/42" and Am7Uri.parse(str(uri)) == uri
    assert Am7Uri.parse("am7://chain/p/context/x").object_id == "context/x"
    assert Am7Uri.parse(str(Am7Uri("a b", "data.data", "x y"))) == Am7Uri("a b", "data.data", "x y")
    for bad in ("http://x/y/z", "am7://org/type", "am7://org//id", ""):
        with pytest.raises(ValueError, match="am7://"):
            Am7Uri.parse(bad)
    with pytest.raises(ValueError, match="organization must be a non-empty string"):
        Am7Uri("", "t", "i")


def test_executor_without_client_explains_what_llm_steps_need() -> None:
    with pytest.raises(PlanExecutionError, match=r"needs a model client \(ChainExecutor\(client=...\)\)"):
        asyncio.run(ChainExecutor().execute_chain(ChainPlan(steps=[llm(1)])))
