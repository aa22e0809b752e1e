"""The ``rules`` extractor: explicit first-person statements become facts, with no LLM at all.

Why it exists: it is the whole extractor when no model is configured (``llm.backend: rules``) and a
cheap, high-precision pass next to an LLM. It fires only on phrasings whose meaning is plain ("my
name is…", "I live in…", "remember that…", "from now on…", "我叫…", "私の名前は…") and prefers
missing a fact to inventing one: questions, hypotheticals, hedges, jokes, role-play, quoted or
pasted text, code blocks and assistant turns yield nothing. Everything is regex, compiled once at
import; a message costs tens of microseconds.

How the text is rewritten (stored memories are read back later by people and by LLMs, so each
fact must stand alone):

- English is rewritten in the third person about ``speaker``: "my sister's name is Ana" →
  "The user's sister's name is Ana."; "I prefer tea" → "The user prefers tea."
- Chinese keeps the user's wording with 我 → 用户 ("我叫小明" → "用户叫小明。"); Japanese keeps it
  with 私/僕/俺 → ユーザー ("私の名前はアナです" → "ユーザーの名前はアナです。"). A sentence with no
  subject gets one ("東京に住んでいます" → "ユーザーは東京に住んでいます。").
- Instructions to the assistant are reported, not repeated: "From now on, the user wants answers
  in French.", "用户要求：以后用中文回答。", "ユーザーの希望：これからは日本語で答えてください。"
- A correction that is not itself a known statement keeps the corrected text: "The user
  corrected: it's Ana, not Anna.", "用户更正：…", "ユーザーの訂正：…". One that is ("actually, I
  live in Lisbon") becomes that statement with category ``correction``.
"""

from .engine import Said, extract_facts, extract_statements
from .shapes import MAX_FACTS_PER_MESSAGE, USER_ROLES

__all__ = ["MAX_FACTS_PER_MESSAGE", "USER_ROLES", "Said", "extract_facts", "extract_statements"]
