"""``python -m walkback.agent.hooks AGENT``: the hook command (:mod:`agent.hooks.main`)."""

from .main import main

main()
