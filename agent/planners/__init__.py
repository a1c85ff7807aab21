"""Planners propose one action per step; the harness validates, journals and executes them."""

from __future__ import annotations

from .openai_compat import OpenAIPlanner
from .scripted import ScriptedPlanner

__all__ = ["OpenAIPlanner", "ScriptedPlanner"]
