-- The vector search reads embedding_vector from each row it returns or sorts; stored out of line
-- (the row with both the BLOB and the vector is over TOAST's 2 KB) every such read was a TOAST
-- fetch. MAIN keeps the vector in the row, and the BLOB (read only when a row is exported or
-- re-embedded) goes out of line instead. Rows written before keep their layout until they are
-- next written (a re-embedding rewrites every one).
ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE memories ALTER COLUMN embedding_vector SET STORAGE MAIN;
