"""Between specification revisions, for backends whose own vocabulary is an older one
(LiteRT's translators read the 2024 draft's layout of parameters)."""
