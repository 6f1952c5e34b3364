//! Schemas of an encoding, from its dynamic description: the binary layout tables as
//! data-encoding's `Binary_schema` prints them (`+---+` tables with `Name | Size | Contents`,
//! one per object, union case and named recursive type), and a JSON schema (draft 04, as
//! data-encoding's `Json.schema`).
