"""The agent's tools: plain functions, deterministic."""

from __future__ import annotations

TEMPERATURES = {"Oslo": 4, "Lisbon": 19, "Cairo": 31}


def get_weather(city: str) -> str:
    """The current temperature in a city."""
    if city not in TEMPERATURES:
        return f"no weather station in {city}"
    return f"{TEMPERATURES[city]} °C in {city}"


TOOLS = {"get_weather": get_weather}
SCHEMAS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
