"""Seed 000/001 rules that mutation testing found unasserted (docs/mutation.md, the chain
area), on the context: the MCP context blocks an LLM step is given, the saved context and
its restoring, and the chain as chat history (seed Group K)."""

from __future__ import annotations

from harness.systems.chain import (
    ChainPlan,
    McpContextBuilder,
    PlanStep,
    chain_chat_history,
    filter_context,
    parse_context,
    restore_context,
)
from tests.harness.systems.chain.chain_support import Bench, answers, llm, step

QF = {"field": "age", "comparator": "GT", "value": "30"}


# -- MCP context blocks: what an LLM step is given, and the saved context ---------------


def test_unseen_outputs_reach_the_model_as_ephemeral_blocks_at_their_context_uri() -> None:
    b = Bench()
    b.executor.tools["echo"] = lambda text: text
    b.run(
        ChainPlan(
            object_id="p9",
            plan_query=answers("q", "ok"),
            steps=[
                step(1, toolName="echo", inputs={"text": "quoted"}, outputName="first"),
                step(2, toolName="describeAllModels", outputName="models"),
                llm(3, "Use {{first}}."),
            ],
        )
    )
    sent = parse_context(b.prompts()[0])
    assert [(x.uri, x.ephemeral, x.data["name"]) for x in sent.blocks] == [
        ("am7://chain/p9/context/models", True, "models")
    ]  # the quoted one is not repeated
    assert sent.content.endswith("\n\nUse quoted.")  # after the plan query that opens the conversation


def test_the_saved_context_is_ephemeral_step_output_blocks() -> None:
    done = Bench().run(ChainPlan(object_id="p1", steps=[step(1, toolName="describeAllModels", outputName="m")]))
    (block,) = parse_context(done.context_blocks).blocks
    assert (block.type, block.uri, block.ephemeral) == ("resource", "am7://chain/p1/context/m", True)
    assert '<mcp:context type="resource" uri="am7://chain/p1/context/m" ephemeral="true">' in done.context_blocks


def test_restoring_a_context_reads_every_step_output_and_skips_other_blocks() -> None:
    text = (
        McpContextBuilder()
        .add_resource("am7://vector/citations/x", "urn:am7:vector:search-result", {"results": []})
        .add_resource("am7://chain/p/context/a", "urn:am7:chain:step-output", {"name": "a", "value": 1})
        .add_resource("am7://org/data.data/d", "urn:other", {"name": "d", "value": 2})
        .add_resource("am7://chain/p/context/b", "urn:am7:chain:step-output", {"name": "b", "value": [2]})
        .build()
    )
    # A block whose data has no name is named by the last part of its context URI.
    text += (
        '\n<mcp:context type="resource" uri="am7://chain/p/context/c">'
        '{"schema": "urn:am7:chain:step-output", "value": "unnamed"}</mcp:context>'
    )
    text += '\n<mcp:context type="resource">"not an object"</mcp:context>'
    assert restore_context(text) == {"a": 1, "b": [2], "c": "unnamed"}


def test_list_inputs_are_filled_from_the_context_too() -> None:
    b = Bench()
    b.executor.tools["join"] = lambda parts: " + ".join(parts)
    done = b.run(
        ChainPlan(
            steps=[
                step(1, toolName="describeAllModels", outputName="m"),
                step(2, toolName="join", inputs={"parts": ["models: {{m}}", "end"]}),
            ]
        )
    )
    assert done.output == "models: olio.charPerson, data.data + end"


def test_blocks_render_their_ephemeral_flag_and_reasoning_is_ephemeral() -> None:
    kept = McpContextBuilder().add_resource("am7://o/t/1", "urn:x", {"v": 1}).build()
    assert kept.startswith('<mcp:context type="resource" uri="am7://o/t/1">\n')
    reasoning = McpContextBuilder().add_reasoning("because").build()
    assert reasoning == '<mcp:context type="reasoning" ephemeral="true">\nbecause\n</mcp:context>'
    assert parse_context(reasoning).blocks[0].ephemeral and not parse_context(kept).blocks[0].ephemeral


def test_the_display_filter_sorts_blocks_and_shows_only_what_is_asked() -> None:
    citation = (
        McpContextBuilder()
        .add_resource("am7://vector/citations/c", "urn:am7:vector:search-result", {"results": []}, ephemeral=True)
        .build()
    )
    resource = McpContextBuilder().add_resource("am7://o/data.data/r", "urn:x", {"v": 1}).build()
    reasoning = McpContextBuilder().add_reasoning("thinking").build()
    text = "\n".join(["Answer.", citation, resource, reasoning])
    plain = filter_context(text)
    assert plain.content == "Answer."
    assert [b.uri for b in plain.citations] == ["am7://vector/citations/c"]
    assert [b.uri for b in plain.resources] == ["am7://o/data.data/r"]
    assert [b.data for b in plain.reasoning] == ["thinking"]
    assert filter_context(text, show_ephemeral=True).content == "\n".join(["Answer.", citation, resource])
    assert filter_context(text, show_reasoning=True).content == "\n".join(["Answer.", reasoning])


# -- the chain as chat history (seed Group K) ---------------------------------------------


def test_the_chat_history_lists_the_steps_that_ran_and_gives_citations_from_rag_steps() -> None:
    rag = (
        McpContextBuilder()
        .add_resource("am7://vector/citations/p-2", "urn:am7:vector:search-result", {"results": []}, ephemeral=True)
        .build()
    )
    plan = ChainPlan(
        name="history",
        plan_query="Who bakes?",
        executed=True,
        output=["Cy"],
        steps=[
            PlanStep(step_number=1, step_type="TOOL", step_status="COMPLETED", description="list models"),
            PlanStep(
                step_number=2, step_type="RAG_QUERY", step_status="COMPLETED", output=rag, summary_text="0 result(s)"
            ),
            PlanStep(
                step_number=3,
                step_type="LLM",
                step_status="COMPLETED",
                dynamic=True,
                output=rag,
                summary_text="quoted the citations",
            ),
            PlanStep(step_number=4, step_type="RAG_QUERY", step_status="COMPLETED", output="no blocks here"),
            PlanStep(step_number=5, step_type="TOOL", description="not run"),
        ],
    )
    history = chain_chat_history(plan)
    assert history["chatHistory"]["messages"] == [
        {"role": "user", "content": "Who bakes?"},
        {
            "role": "system",
            "content": "Chain steps:\n1. [Tool] COMPLETED: list models\n2. [RAG] COMPLETED: 0 result(s)\n"
            "3. [LLM] COMPLETED (dynamic): quoted the citations\n4. [RAG] COMPLETED: ",
        },
        {"role": "system", "content": rag},
        {"role": "assistant", "content": "['Cy']"},
    ]
    assert (history["planName"], history["executed"]) == ("history", True)


def test_the_chat_history_gives_citations_from_every_rag_step_one_after_the_other() -> None:
    first, second = (
        McpContextBuilder()
        .add_resource(f"am7://vector/citations/p-{n}", "urn:am7:vector:search-result", {"results": []})
        .build()
        for n in (1, 2)
    )
    plan = ChainPlan(
        output="done",
        steps=[
            PlanStep(step_number=1, step_type="RAG_QUERY", step_status="COMPLETED", output=first),
            PlanStep(step_number=2, step_type="RAG_QUERY", step_status="COMPLETED", output=second),
        ],
    )
    messages = chain_chat_history(plan)["chatHistory"]["messages"]
    assert messages[1] == {"role": "system", "content": f"{first}\n{second}"}
    assert messages[0]["content"] == "Chain steps:\n1. [RAG] COMPLETED: \n2. [RAG] COMPLETED: "
