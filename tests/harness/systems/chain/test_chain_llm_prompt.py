"""What an LLM step's model receives (seed 001 §6.1): the named outputs it has not seen
and its prompt does not quote, as MCP context blocks — a RAG step's blocks as they are,
one after the other — then a blank line, then its prompt; nothing else between them."""

from __future__ import annotations

from harness.systems.chain import ChainPlan
from tests.harness.systems.chain.chain_support import Bench, answers, llm, step


def test_an_llm_step_receives_the_unseen_rag_blocks_then_its_prompt() -> None:
    b = Bench(routing=False)
    search = {"stepType": "RAG_QUERY", "ragLimit": 1}
    done = b.run(
        ChainPlan(
            plan_query=answers("q", "Cy bakes bread."),
            steps=[
                step(1, **search, ragQuery="bread", outputName="bread"),
                step(2, **search, ragQuery="population", outputName="census"),
                llm(3, "Who bakes?"),
            ],
        )
    )
    bread, population = (str(s.output) for s in done.steps[:2])
    assert "<mcp:context" in bread and "<mcp:context" in population
    (prompt,) = b.prompts()  # after the chain's query
    assert prompt.endswith(f"<|instruction_end|>\n\n{bread}\n{population}\n\nWho bakes?")
