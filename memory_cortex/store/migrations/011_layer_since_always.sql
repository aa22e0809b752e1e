-- Every row knows when it entered its layer (issue 23). Decay and the working TTL count from
-- layer_since; until now a row written straight to a layer left it NULL and the clock fell back to
-- created_at, which a client may back-date: a memory written today with an old created_at looked
-- months old in core. From here on every write path sets it (insert: now; import: the file's value,
-- else now). Rows stored before this do not say when they entered: their clock starts at the
-- upgrade, so nothing is archived on the strength of a back-dated created_at (the cost: decay of
-- those rows starts over once).
UPDATE memories SET layer_since = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE layer_since IS NULL;
