-- A relation that ended without a fact of its own ending (issue 33): "Me and Paolo split up" ends the
-- relation User -partner-> Paolo read from "Paolo (the user's boyfriend) loves food trips", a fact
-- about Paolo that stays true. ended_at: when the statement that ended it was said; NULL while it holds
-- (or while only the fact that stated it can end it, as before).
ALTER TABLE relations ADD COLUMN ended_at TEXT;
