"""Hooked sessions: an agent's transcript and the hook journal walkback wrote while it ran, as one.

:func:`merge` is applied by the registry after every format importer (``importers.load``), so every
hooked format gets it the same way: the journal is found by (agent, the format's session id) under
``$WALKBACK_HOME/hooks`` (:func:`journal_for`) and joined to the transcript by call id.
"""

from ._locate import journal_for, session_id
from ._merge import Call, Hooked, merge

__all__ = [
    "Call",
    "Hooked",
    "journal_for",
    "merge",
    "session_id",
]
