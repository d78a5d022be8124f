"""Scenario files: an agent run written down as data, replayed byte-for-byte.

A scenario is YAML (loaded safely) validated by pydantic. Errors name the file, the
line and the field::

    scenarios/tool_use.yaml:14: script[1].messages[0]: a message needs a 'text_message' or a 'tool_call' key

Example::

    runner: agent                  # agent | chain | planner | a hook's name | package.module:function
    protocols: all                 # or a list: [anthropic-messages, openai-chat, openai-responses]
    prompt: List all BC entities
    script:                        # the instruction chain, one entry per model turn
      - messages:
          - text_message: {text: Let me list the entities.}
          - tool_call: [{name: list_all_entities, args: {}}]
      - messages:
          - text_message: {text: I found the entities.}
    tools:
      - {name: list_all_entities, result: "[\\"Customer\\", \\"Vendor\\"]"}
    expect: {success: true, flow: tool_use}
    turns:                         # optional: the session's next messages, in order
      - prompt: And the vendors?
        script: [{messages: [{text_message: {text: There is one vendor.}}]}]
        flow: simple_message       # this message's flow (default: expect.flow)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from harness.exceptions import HarnessError, missing_extra
from harness.flows import known_flow
from harness.systems.chain.models import ChainPlan, PlanStep
from harness.systems.chain.policy import Policy
from mockllm import PROTOCOLS, Instruction, InstructionChain, reject_unknown_keys, validation_problems
from mockllm.testing import FileError

__all__ = [
    "AttachmentSpec",
    "DocumentSpec",
    "Expectation",
    "FollowUp",
    "Scenario",
    "ScenarioError",
    "ScenarioTool",
    "field_line",
    "load_scenario",
    "SCENARIO_PROTOCOLS",
]

SCENARIO_PROTOCOLS = PROTOCOLS
"""Every protocol the mock speaks (``mockllm.PROTOCOLS``): what ``protocols: all`` means."""


def _a_protocol(value: str) -> str:
    if value not in PROTOCOLS:
        raise ValueError(f"{value!r} is not a protocol the mock speaks; use one of {', '.join(PROTOCOLS)} (or all)")
    return value


Protocol = Annotated[str, AfterValidator(_a_protocol)]
_RUNNER_REFERENCE = re.compile(r"^[A-Za-z_][\w-]*$|^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")

Flow = Annotated[str, AfterValidator(known_flow)]
# The bundled runners that play one message: a scenario for them has no ``turns``.
_ONE_MESSAGE_RUNNERS = ("chain", "planner")


class ScenarioError(HarnessError, FileError):
    """A scenario file that cannot be used; the message says where and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioTool(_Strict):
    """A tool with a canned result. ``approval: true`` makes it a write tool that
    needs approval; ``error`` makes it fail with that message."""

    name: str = Field(min_length=1)
    description: str = ""
    result: Any = None
    error: str | None = None
    approval: bool = False
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class AttachmentSpec(_Strict):
    id: str
    name: str
    content: str
    owner: str = "user-1"


class DocumentSpec(_Strict):
    """A document for the chain executor's RAG steps (``am7://org/type/id``)."""

    uri: str = Field(pattern=r"^am7://[^/]+/[^/]+/.+")
    text: str


class Expectation(_Strict):
    success: bool = True
    flow: Flow | None = None
    """Which bundled invariant check applies: a seed flow (agent runner) or ``chain``."""
    error_contains: str | None = None


def _script_entries_are_mappings(value: Any) -> Any:
    # Before validation: a non-mapping entry is named as such, not as a union's branches.
    if isinstance(value, list):
        for i, entry in enumerate(value):
            if not isinstance(entry, dict):
                raise ValueError(f"entry {i} must be a mapping (an instruction), got {type(entry).__name__}")
    return value


def _tagged(prompt: str, script: list[Instruction]) -> str:
    return InstructionChain(instruction_chain=script).tagged(prompt) if script else prompt


class FollowUp(_Strict):
    """A later message of the scenario's session (``turns``): its prompt, its script,
    and the seed flow its run obeys (the scenario's ``expect.flow`` when not given)."""

    prompt: str
    script: list[Instruction] = Field(default_factory=list)
    flow: Flow | None = None

    _script_entries = field_validator("script", mode="before")(_script_entries_are_mappings)
    _script_keys = field_validator("script")(reject_unknown_keys)

    def tagged_prompt(self) -> str:
        """The message with its script attached (what the runner sends)."""
        return _tagged(self.prompt, self.script)


def _organization_seed(value: Any) -> Any:
    # Imported here: the identity tools need scim2-models (the agent extra), and a
    # scenario without an identity section must load without it.
    try:
        from harness.systems.identity.seeding import OrganizationSeed
    except ModuleNotFoundError as exc:
        if exc.name != "scim2_models":
            raise
        raise ValueError(
            str(missing_extra("scim2_models", needed_by="a scenario's identity section", extra="agent"))
        ) from None

    return OrganizationSeed.model_validate(value)


class Scenario(_Strict):
    """One scenario. ``script`` is the instruction chain; ``plan`` and ``planner``
    hold the chain executor's plan and the planner's settings for those runners;
    ``options`` is free for a runner of the user's own. ``allow_fallback`` accepts
    requests that got the mock's fallback reply or an unscripted 4xx (and lets the golden
    record the fallback); ``allow_unused_steps`` accepts scripted steps no request reached;
    ``allow_impossible_replies`` accepts scripted replies no provider could give to their
    request (past its output-token limit, breaking its structured output)."""

    name: str
    description: str = ""
    runner: str = "agent"
    protocols: Literal["all"] | list[Protocol] = Field(default_factory=lambda: ["anthropic-messages"])
    prompt: str
    script: list[Instruction] = Field(default_factory=list)
    tools: list[ScenarioTool] = Field(default_factory=list)
    approvals: list[Literal["approve", "reject", "timeout"]] = Field(default_factory=list)
    attachments: list[AttachmentSpec] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    user_id: str = "user-1"
    session_id: str = "session-1"
    plan: dict[str, Any] | None = None
    policies: list[Policy] = Field(default_factory=list)
    documents: list[DocumentSpec] = Field(default_factory=list)
    prompt_configs: dict[str, str] = Field(default_factory=dict)
    identity: dict[str, Annotated[Any, BeforeValidator(_organization_seed)]] | None = None
    """Users and groups per organization for the chain's identity tools: each an
    ``harness.systems.identity.seeding.OrganizationSeed``."""
    allow_fallback: bool = False
    allow_unused_steps: bool = False
    allow_impossible_replies: bool = False
    expect: Expectation = Field(default_factory=Expectation)
    turns: list[FollowUp] = Field(default_factory=list)
    """The session's next messages. Each is a run of its own in the same session, after
    the one before it succeeded, so its sequence numbers continue the session's (seed
    002: a per-session counter); each run is checked against its flow from there."""

    @field_validator("runner")
    @classmethod
    def _runner_is_a_name_or_a_function_path(cls, value: str) -> str:
        if not _RUNNER_REFERENCE.match(value):
            raise ValueError(
                f"{value!r} is neither a runner name (agent, chain, planner, or one a hook or entry "
                "point provides) nor a function as package.module:function"
            )
        return value

    _script_entries = field_validator("script", mode="before")(_script_entries_are_mappings)
    _script_keys = field_validator("script")(reject_unknown_keys)

    @field_validator("turns")
    @classmethod
    def _turns_need_a_runner_that_plays_them(cls, value: list[FollowUp], info: ValidationInfo) -> list[FollowUp]:
        runner = info.data.get("runner")
        if value and runner in _ONE_MESSAGE_RUNNERS:
            raise ValueError(
                f"the {runner} runner plays one message; turns are played by the agent runner (or a runner of your own)"
            )
        return value

    @field_validator("plan")
    @classmethod
    def _plan_is_a_chain_plan(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        _known_keys(value, ChainPlan, "")
        for i, step in enumerate(value.get("steps") or []):
            if isinstance(step, dict):
                _known_keys(step, PlanStep, f"steps[{i}]: ")
        ChainPlan.model_validate(value)
        return value

    @property
    def protocol_list(self) -> list[str]:
        return list(SCENARIO_PROTOCOLS) if self.protocols == "all" else list(self.protocols)

    def tagged_prompt(self) -> str:
        """The user prompt with the script attached (what the runner sends)."""
        return _tagged(self.prompt, self.script)

    @property
    def flows(self) -> list[Flow | None]:
        """The flow of each message of the session: the first's, then each turn's."""
        return [self.expect.flow, *(turn.flow or self.expect.flow for turn in self.turns)]


def _known_keys(data: dict[str, Any], model: type[BaseModel], where: str) -> None:
    known = {f.alias or name for name, f in model.model_fields.items()} | set(model.model_fields)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(
            f"{where}unknown key(s) {unknown}; known: {sorted(f.alias or n for n, f in model.model_fields.items())}"
        )


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (the deepest one that exists)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            continue  # a union tag or a model name in the location: not in the file
        line = node.start_mark.line + 1
    return line


def field_line(path: Path | str, *loc: Any) -> int | None:
    """The 1-based line of the field at ``loc`` in the scenario file at ``path``."""
    try:
        return _line_of(yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader), loc)
    except (OSError, yaml.YAMLError):
        return None


def load_scenario(path: Path | str) -> Scenario:
    """Load and validate one scenario file; raise ``ScenarioError`` naming file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(path, None, f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(path, line, f"not valid YAML: {problem}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(path, 1, f"a scenario is a mapping of fields, got {type(data).__name__}")
    data.setdefault("name", path.stem)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        problems = _problems(node, exc)
        line, first = problems[0]
        rest = "".join(f"\n{path}:{ln}: {reason}" for ln, reason in problems[1:])
        raise ScenarioError(path, line, first + rest) from exc


def _problems(node: yaml.Node | None, exc: ValidationError) -> list[tuple[int | None, str]]:
    """One (line, reason) per problem (``mockllm.validation_problems``), sorted by line."""
    problems = [(_line_of(node, problem.loc), str(problem)) for problem in validation_problems(exc, Scenario)]
    return sorted(problems, key=lambda p: p[0] or 0)
