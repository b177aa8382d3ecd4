"""Between specification revisions: the neutral home of the translation every backend
that speaks a later revision than a pack's shares.

A 2024 draft graph becomes a TOSA 1.0 flatbuffer (:mod:`.translate`, :mod:`.operators`,
:mod:`.emitter`, :mod:`.elements`), a graph the later revision judges differently is
named by its conflict (:mod:`.conflicts`), a 1.0 or 1.1 graph is written as it is
(:mod:`.native`), and :mod:`.revisions` tables what differs and what Arm's tools lack;
:mod:`.flatbuffer` is the one step ``iree`` and ``vulkan`` call.  Backends import this
package, never ``conformance.backends.arm`` (the Arm model's own backend).
:mod:`.parameters` serves backends whose vocabulary is an older one (LiteRT's
translators read the 2024 draft's layout of parameters).
"""
