-- Issue 46: the owner's edits of the brand (the console's Brand page) laid
-- over the `[brand]` settings: one JSON document (`BrandEdits`: name, colour,
-- support, whatsapp, credit) and its version, bumped on every change, so
-- every node's brand cache sees an edit within a second (like the catalogue).
CREATE TABLE brand (
    id        INTEGER PRIMARY KEY,
    version   BIGINT NOT NULL,
    document  TEXT NOT NULL
);
