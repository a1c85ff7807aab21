"""The archive: every session indexed once, to search across sessions, blame a file's lines on the
steps that wrote them, and sum tokens and cost (docs/archive.md).

The store (:mod:`.store`) imports nothing heavier than ``sqlite3``, so ``walkback search`` answers
without loading the timeline model; only indexing (:mod:`.index`) reads sessions.
"""
