-- archive.db schema 3 (0003_plan_book) as created by Arxiu before sqlite-utils (commit e70e934)
CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP);;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);;
CREATE TABLE sections (
    tipo TEXT PRIMARY KEY,
    labels TEXT NOT NULL DEFAULT '{}',
    description TEXT NOT NULL DEFAULT '',
    restricted INTEGER NOT NULL DEFAULT 0,
    writable INTEGER NOT NULL DEFAULT 0,
    label_field TEXT
);;
CREATE TABLE fields (
    tipo TEXT PRIMARY KEY,
    section_tipo TEXT NOT NULL REFERENCES sections(tipo),
    labels TEXT NOT NULL DEFAULT '{}',
    kind TEXT NOT NULL DEFAULT 'text',
    multilingual INTEGER NOT NULL DEFAULT 0,
    target_section TEXT,
    position INTEGER NOT NULL DEFAULT 0
);;
CREATE INDEX fields_by_section ON fields(section_tipo, position);;
CREATE TABLE records (
    section_tipo TEXT NOT NULL REFERENCES sections(tipo),
    section_id INTEGER NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    version INTEGER NOT NULL DEFAULT 1,
    restricted INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (section_tipo, section_id)
) WITHOUT ROWID;;
CREATE TABLE links (
    from_section TEXT NOT NULL,
    from_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    to_section TEXT NOT NULL,
    to_id INTEGER NOT NULL,
    PRIMARY KEY (from_section, from_id, field_tipo, to_section, to_id)
) WITHOUT ROWID;;
CREATE INDEX links_reverse ON links(to_section, to_id);;
CREATE TABLE media (
    id INTEGER PRIMARY KEY,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    path TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    width INTEGER,
    height INTEGER,
    duration_s REAL,
    thumbnail TEXT,
    created_at TEXT NOT NULL
);;
CREATE INDEX media_by_record ON media(section_tipo, section_id);;
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    section_tipo TEXT,
    section_id INTEGER,
    plan_hash TEXT,
    op_id TEXT,
    before TEXT,
    after TEXT,
    model TEXT,
    egress TEXT,
    actor TEXT
);;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;;
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    history TEXT NOT NULL DEFAULT '[]',
    transcript TEXT NOT NULL DEFAULT '[]',
    pending_plan TEXT
);;
CREATE TABLE external_ids (
    source TEXT NOT NULL,
    external_id TEXT NOT NULL,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    PRIMARY KEY (source, external_id)
) WITHOUT ROWID;;
CREATE TABLE index_chunks (
    id INTEGER PRIMARY KEY,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    lang TEXT NOT NULL,
    position INTEGER NOT NULL,
    timecode TEXT,
    page TEXT,
    label TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    restricted INTEGER
);;
CREATE INDEX index_chunks_by_record ON index_chunks(section_tipo, section_id);;
CREATE INDEX index_chunks_by_hash ON index_chunks(content_hash);;
CREATE TABLE index_vectors (
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (content_hash, model)
) WITHOUT ROWID;;
CREATE VIRTUAL TABLE index_fts USING fts5(
    label, text, content='index_chunks', content_rowid='id',
    tokenize="unicode61 remove_diacritics 2"
);;
CREATE TRIGGER index_chunks_ai AFTER INSERT ON index_chunks BEGIN
    INSERT INTO index_fts(rowid, label, text) VALUES (new.id, new.label, new.text); END;;
CREATE TRIGGER index_chunks_ad AFTER DELETE ON index_chunks BEGIN
    INSERT INTO index_fts(index_fts, rowid, label, text)
    VALUES ('delete', old.id, old.label, old.text); END;;
CREATE TABLE index_records (
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (section_tipo, section_id)
) WITHOUT ROWID;;
CREATE TABLE index_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);;
CREATE TABLE plans (
    id TEXT PRIMARY KEY,
    plan_hash TEXT NOT NULL,
    plan TEXT NOT NULL,
    conversation_id TEXT,
    model_id TEXT NOT NULL DEFAULT '',
    egress TEXT NOT NULL DEFAULT 'local',
    tainted INTEGER NOT NULL DEFAULT 0,
    restricted_text INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending',
    owner TEXT,
    report TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);;
CREATE INDEX plans_by_conversation ON plans(conversation_id, status);;
CREATE INDEX plans_by_hash ON plans(plan_hash);;
CREATE INDEX audit_by_plan ON audit(plan_hash, op_id);;
CREATE TABLE id_marks (
    section_tipo TEXT PRIMARY KEY,
    high INTEGER NOT NULL
) WITHOUT ROWID;;
