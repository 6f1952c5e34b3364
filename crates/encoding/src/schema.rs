//! Schemas of an encoding, from its dynamic description: the binary layout tables as
//! data-encoding's `Binary_schema` prints them (`+---+` tables of `Name | Size | Contents`,
//! one for the top level and one per union, list element or recursive type it refers to with
//! `$name`), and a JSON schema (draft 04, the dialect data-encoding's `Json.schema` emits).
//!
//! Both walks follow the description, which is finite (recursive encodings appear once, by
//! index), so their depth is that of the encoding's definition, not of any input.

use crate::describe::{Desc, FieldDesc, IntKind, JsonRepr, LengthKind, Presence, Schema};
use crate::layout::SizeClass;
use serde_json::{json, Map, Value};

/// One row of a binary layout table.
type Row = [String; 3];

/// A named table the layout refers to, with `$name`.
enum Table {
    /// An object-like table of rows.
    Fields(Vec<Row>),
    /// A union: a title suffix and one table per case.
    Cases {
        kind: String,
        cases: Vec<(String, Vec<Row>)>,
    },
    /// A `string_enum`.
    Enum { size: IntKind, cases: Vec<String> },
}

fn size_text(class: SizeClass) -> String {
    match class {
        SizeClass::Fixed(1) => "1 byte".to_owned(),
        SizeClass::Fixed(size) => format!("{size} bytes"),
        SizeClass::Variable => "Variable".to_owned(),
        SizeClass::Dynamic => "Determined from data".to_owned(),
    }
}

fn header_kind(kind: LengthKind) -> (SizeClass, String) {
    match kind {
        LengthKind::Uint8 => (SizeClass::Fixed(1), IntKind::Uint8.schema_name().to_owned()),
        LengthKind::Uint16 => (
            SizeClass::Fixed(2),
            IntKind::Uint16.schema_name().to_owned(),
        ),
        LengthKind::Uint30 => (
            SizeClass::Fixed(4),
            IntKind::Uint30.schema_name().to_owned(),
        ),
        LengthKind::N => (SizeClass::Dynamic, "$N.t".to_owned()),
    }
}

struct LayoutBuilder<'s> {
    schema: &'s Schema,
    tables: Vec<(String, Table)>,
    anonymous_count: usize,
}

impl LayoutBuilder<'_> {
    fn has_table(&self, name: &str) -> bool {
        self.tables.iter().any(|(existing, _)| existing == name)
    }

    /// The contents column of `desc`, registering any table it refers to under `name`.
    fn contents(&mut self, desc: &Desc, name: &str) -> String {
        match desc {
            Desc::Unit | Desc::Null | Desc::Empty | Desc::Constant(_) => String::new(),
            Desc::Bool => "boolean (0 for false, 255 for true)".to_owned(),
            Desc::Int(kind) => kind.schema_name().to_owned(),
            Desc::RangedInt { minimum, maximum } => {
                let kind = crate::primitive::range_to_int_kind(*minimum, *maximum);
                if *minimum > 0 {
                    format!(
                        "{} in the range {minimum} to {maximum} (shifted by {minimum})",
                        kind.schema_name()
                    )
                } else {
                    format!("{} in the range {minimum} to {maximum}", kind.schema_name())
                }
            }
            Desc::Float => "double-precision floating-point number".to_owned(),
            Desc::RangedFloat { minimum, maximum } => format!(
                "double-precision floating-point number, in the range {minimum:.6} to {maximum:.6}"
            ),
            Desc::N => "$N.t".to_owned(),
            Desc::Z => "$Z.t".to_owned(),
            Desc::Bytes { .. } => "bytes".to_owned(),
            Desc::Padded { inner, .. } => self.contents(inner, name),
            Desc::StringEnum { cases } => {
                let size = crate::union::enum_tag_kind(cases.len());
                if !self.has_table(name) {
                    self.tables.push((
                        name.to_owned(),
                        Table::Enum {
                            size,
                            cases: cases.clone(),
                        },
                    ));
                }
                format!(
                    "{} encoding an enumeration (see {name})",
                    size.schema_name()
                )
            }
            Desc::List {
                max_length,
                element,
            }
            | Desc::ListWithLength {
                max_length,
                element,
                ..
            } => {
                let bound = max_length.map_or(String::new(), |max| format!("at most {max} "));
                format!("sequence of {bound}{}", self.element(element, name))
            }
            Desc::FixedList { length, element } => {
                format!(
                    "sequence of exactly {length} {}",
                    self.element(element, name)
                )
            }
            Desc::DynamicSize { inner, .. } | Desc::CheckSize { inner, .. } => {
                self.contents(inner, name)
            }
            Desc::Obj(_) | Desc::Tup(_) | Desc::Option(_) | Desc::Union { .. } => {
                self.reference(desc, name)
            }
            Desc::Mu(index) => {
                let Some(mu) = self.schema.recursive.get(*index) else {
                    return String::new();
                };
                let mu_name = mu.name.clone();
                if !self.has_table(&mu_name) {
                    // Registered before its body, so that the body's references stop here.
                    self.tables
                        .push((mu_name.clone(), Table::Fields(Vec::new())));
                    let table = self.table(&mu.body, &mu_name);
                    if let Some(entry) = self.tables.iter_mut().find(|(n, _)| *n == mu_name) {
                        entry.1 = table;
                    }
                }
                format!("${mu_name}")
            }
        }
    }

    fn element(&mut self, element: &Desc, name: &str) -> String {
        match element {
            Desc::Obj(_) | Desc::Tup(_) | Desc::Union { .. } | Desc::Option(_) => {
                self.reference(element, &format!("{name}.elem"))
            }
            _ => self.contents(element, &format!("{name}.elem")),
        }
    }

    /// `$name`, with a table for `desc` registered under `name`.
    fn reference(&mut self, desc: &Desc, name: &str) -> String {
        if !self.has_table(name) {
            self.tables
                .push((name.to_owned(), Table::Fields(Vec::new())));
            let table = self.table(desc, name);
            if let Some(entry) = self.tables.iter_mut().find(|(n, _)| n == name) {
                entry.1 = table;
            }
        }
        format!("${name}")
    }

    fn table(&mut self, desc: &Desc, name: &str) -> Table {
        match desc {
            Desc::Union { tag_size, cases } => {
                let kind = format!(
                    "{}, {}-bit tag",
                    size_text(self.schema.size_class(desc)),
                    tag_size.size_bytes() * 8
                );
                let cases = cases
                    .iter()
                    .map(|case| {
                        let mut rows = vec![[
                            "Tag".to_owned(),
                            size_text(SizeClass::Fixed(tag_size.size_bytes())),
                            format!("unsigned {}-bit integer", tag_size.size_bytes() * 8),
                        ]];
                        self.rows(&case.desc, &case.title, &mut rows);
                        (format!("{} (tag {})", case.title, case.tag), rows)
                    })
                    .collect();
                Table::Cases { kind, cases }
            }
            Desc::Option(inner) => {
                let mut some = vec![[
                    "Tag".to_owned(),
                    "1 byte".to_owned(),
                    "unsigned 8-bit integer".to_owned(),
                ]];
                self.rows(inner, "Some", &mut some);
                let none = vec![[
                    "Tag".to_owned(),
                    "1 byte".to_owned(),
                    "unsigned 8-bit integer".to_owned(),
                ]];
                Table::Cases {
                    kind: format!("{}, 8-bit tag", size_text(self.schema.size_class(desc))),
                    cases: vec![
                        ("None (tag 0)".to_owned(), none),
                        ("Some (tag 1)".to_owned(), some),
                    ],
                }
            }
            _ => {
                let mut rows = Vec::new();
                self.rows(desc, name, &mut rows);
                Table::Fields(rows)
            }
        }
    }

    fn anonymous(&mut self) -> String {
        let name = format!("Unnamed field {}", self.anonymous_count);
        self.anonymous_count += 1;
        name
    }

    /// The rows of `desc` laid out in its parent's table, as the field `name`.
    fn rows(&mut self, desc: &Desc, name: &str, rows: &mut Vec<Row>) {
        match desc {
            Desc::Obj(fields) => {
                for field in fields {
                    self.field_rows(field, rows);
                }
            }
            Desc::Tup(elements) => {
                for element in elements {
                    let element_name = self.anonymous();
                    self.rows(element, &element_name, rows);
                }
            }
            Desc::DynamicSize { kind, inner } => {
                let (size, contents) = header_kind(*kind);
                rows.push([
                    "# bytes in next field".to_owned(),
                    size_text(size),
                    contents,
                ]);
                self.rows(inner, name, rows);
            }
            Desc::ListWithLength { kind, .. } => {
                let (size, contents) = header_kind(*kind);
                rows.push([
                    "# elements in next field".to_owned(),
                    size_text(size),
                    contents,
                ]);
                let contents = self.contents(desc, name);
                rows.push([name.to_owned(), "Variable".to_owned(), contents]);
            }
            Desc::CheckSize { inner, .. } => self.rows(inner, name, rows),
            Desc::Padded {
                inner,
                padding_bytes,
            } => {
                self.rows(inner, name, rows);
                rows.push([
                    "padding".to_owned(),
                    size_text(SizeClass::Fixed(*padding_bytes)),
                    "padding".to_owned(),
                ]);
            }
            _ => {
                let class = self.schema.size_class(desc);
                if class == SizeClass::Fixed(0) {
                    return;
                }
                let contents = self.contents(desc, name);
                rows.push([name.to_owned(), size_text(class), contents]);
            }
        }
    }

    fn field_rows(&mut self, field: &FieldDesc, rows: &mut Vec<Row>) {
        if let Presence::Optional { variable: false } = field.presence {
            rows.push([
                format!("? presence of field \"{}\"", field.name),
                "1 byte".to_owned(),
                "boolean (0 for false, 255 for true)".to_owned(),
            ]);
        }
        self.rows(&field.desc, &field.name, rows);
    }
}

fn render_table(headers: [&str; 3], body: &[Row], out: &mut String) {
    let mut widths = headers.map(str::len);
    for row in body {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let line = |fill: char, out: &mut String| {
        out.push('+');
        for width in widths {
            out.extend(std::iter::repeat_n(fill, width + 2));
            out.push('+');
        }
        out.push('\n');
    };
    let row = |cells: [&str; 3], out: &mut String| {
        out.push('|');
        for (width, cell) in widths.iter().zip(cells) {
            out.push(' ');
            out.push_str(cell);
            out.extend(std::iter::repeat_n(' ', width - cell.len()));
            out.push_str(" |");
        }
        out.push('\n');
    };
    line('-', out);
    row(headers, out);
    line('=', out);
    for cells in body {
        row([&cells[0], &cells[1], &cells[2]], out);
        line('-', out);
    }
    out.push('\n');
}

fn render_title(level: u8, title: &str, out: &mut String) {
    let underline = match level {
        1 => '*',
        2 => '=',
        _ => '`',
    };
    out.push_str(title);
    out.push('\n');
    out.extend(std::iter::repeat_n(underline, title.chars().count()));
    out.push_str("\n\n");
}

fn render(table: &Table, title: Option<&str>, out: &mut String) {
    const HEADERS: [&str; 3] = ["Name", "Size", "Contents"];
    match table {
        Table::Fields(rows) => {
            if let Some(title) = title {
                render_title(1, title, out);
            }
            render_table(HEADERS, rows, out);
        }
        Table::Cases { kind, cases } => {
            if let Some(title) = title {
                render_title(1, &format!("{title} ({kind})"), out);
            }
            for (case_title, rows) in cases {
                render_title(2, case_title, out);
                render_table(HEADERS, rows, out);
            }
        }
        Table::Enum { size, cases } => {
            if let Some(title) = title {
                render_title(
                    1,
                    &format!("{title} (Enumeration: {}):", size.schema_name()),
                    out,
                );
            }
            let body: Vec<Row> = cases
                .iter()
                .enumerate()
                .map(|(index, case)| [index.to_string(), case.clone(), String::new()])
                .collect();
            // Enumerations have two columns in data-encoding; the third stays empty here.
            render_table(["Case number", "Encoded string", ""], &body, out);
        }
    }
}

const ZARITH_DESCRIPTION: [(&str, &str); 2] = [
    (
        "N.t",
        "A variable-length sequence of bytes encoding a Zarith natural number. Each byte has a \
         running unary size bit: the most significant bit of each byte indicates whether this \
         is the last byte in the sequence (0) or whether the sequence continues (1). Size bits \
         ignored, the data is the binary representation of the number in little-endian order.",
    ),
    (
        "Z.t",
        "A variable-length sequence of bytes encoding a Zarith integer. Each byte has a running \
         unary size bit: the most significant bit of each byte indicates whether this is the \
         last byte in the sequence (0) or whether the sequence continues (1). The second most \
         significant bit of the first byte is reserved for the sign (0 for positive, 1 for \
         negative). Size and sign bits ignored, the data is the binary representation of the \
         absolute value of the number in little-endian order.",
    ),
];

impl Schema {
    /// The binary layout, as data-encoding's `Binary_schema` prints it.
    pub fn binary_layout(&self) -> String {
        let mut builder = LayoutBuilder {
            schema: self,
            tables: Vec::new(),
            anonymous_count: 0,
        };
        let top = match &self.root {
            Desc::Union { .. } | Desc::Option(_) => builder.table(&self.root, ""),
            Desc::Mu(_) => {
                let name = builder.contents(&self.root, "");
                Table::Fields(vec![[
                    String::new(),
                    size_text(self.size_class(&self.root)),
                    name,
                ]])
            }
            _ => builder.table(&self.root, "Unnamed field 0"),
        };
        let mut out = String::new();
        render(&top, None, &mut out);
        let mut uses_n = out.contains("$N.t");
        let mut uses_z = out.contains("$Z.t");
        let mut rendered = String::new();
        for (name, table) in &builder.tables {
            render(table, Some(name), &mut rendered);
        }
        uses_n |= rendered.contains("$N.t");
        uses_z |= rendered.contains("$Z.t");
        out.push_str(&rendered);
        for (name, description) in ZARITH_DESCRIPTION {
            if (name == "N.t" && uses_n) || (name == "Z.t" && uses_z) {
                render_title(1, name, &mut out);
                out.push_str(description);
                out.push_str("\n\n");
                render_table(
                    ["Name", "Size", "Contents"],
                    &[[
                        name.to_owned(),
                        "Determined from data".to_owned(),
                        format!("${name}"),
                    ]],
                    &mut out,
                );
            }
        }
        out
    }

    /// A JSON schema (draft 04) of the JSON form.
    pub fn json_schema(&self) -> Value {
        let mut definitions = Map::new();
        let mut root = self.json_of(&self.root, &mut definitions);
        if let Value::Object(object) = &mut root {
            object.insert(
                "$schema".to_owned(),
                json!("http://json-schema.org/draft-04/schema#"),
            );
            if !definitions.is_empty() {
                object.insert("definitions".to_owned(), Value::Object(definitions));
            }
        }
        root
    }

    fn json_of(&self, desc: &Desc, definitions: &mut Map<String, Value>) -> Value {
        match desc {
            Desc::Unit => json!({}),
            Desc::Null => json!({"type": "null"}),
            Desc::Empty => {
                json!({"type": "object", "properties": {}, "additionalProperties": false})
            }
            Desc::Constant(text) => json!({"type": "string", "enum": [text]}),
            Desc::Bool => json!({"type": "boolean"}),
            Desc::Int(IntKind::Int64) => {
                json!({"type": "string", "pattern": "^-?[0-9]+$", "title": "64-bit integer"})
            }
            Desc::Int(kind) => {
                let (minimum, maximum) = kind.range();
                json!({"type": "integer", "minimum": minimum, "maximum": maximum})
            }
            Desc::RangedInt { minimum, maximum } => {
                json!({"type": "integer", "minimum": minimum, "maximum": maximum})
            }
            Desc::Float => json!({"type": "number"}),
            Desc::RangedFloat { minimum, maximum } => {
                json!({"type": "number", "minimum": minimum, "maximum": maximum})
            }
            Desc::N => json!({"type": "string", "pattern": "^[0-9]+$", "title": "Big number"}),
            Desc::Z => json!({"type": "string", "pattern": "^-?[0-9]+$", "title": "Big number"}),
            Desc::Bytes { json, .. } => match json {
                JsonRepr::Hex => {
                    json!({"type": "string", "pattern": "^([a-zA-Z0-9][a-zA-Z0-9])*$"})
                }
                JsonRepr::Plain => json!({"type": "string"}),
            },
            Desc::Padded { inner, .. }
            | Desc::DynamicSize { inner, .. }
            | Desc::CheckSize { inner, .. } => self.json_of(inner, definitions),
            Desc::StringEnum { cases } => json!({"type": "string", "enum": cases}),
            Desc::List { element, .. } | Desc::ListWithLength { element, .. } => {
                json!({"type": "array", "items": self.json_of(element, definitions)})
            }
            Desc::FixedList { length, element } => json!({
                "type": "array",
                "items": self.json_of(element, definitions),
                "minItems": length,
                "maxItems": length
            }),
            Desc::Obj(fields) => {
                let mut properties = Map::new();
                let mut required = Vec::new();
                for field in fields {
                    let mut schema = self.json_of(&field.desc, definitions);
                    if let (Presence::Default(binary), Value::Object(object)) =
                        (&field.presence, &mut schema)
                    {
                        if let Ok(default) = crate::json::binary_to_json(
                            &Schema {
                                root: field.desc.clone(),
                                recursive: self.recursive.clone(),
                            },
                            binary,
                        ) {
                            object.insert("default".to_owned(), default);
                        }
                    }
                    if field.presence == Presence::Required {
                        required.push(json!(field.name));
                    }
                    properties.insert(field.name.clone(), schema);
                }
                json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false
                })
            }
            Desc::Tup(elements) => json!({
                "type": "array",
                "items": elements.iter().map(|e| self.json_of(e, definitions)).collect::<Vec<_>>(),
                "additionalItems": false
            }),
            Desc::Option(inner) => json!({
                "oneOf": [self.json_of(inner, definitions), {"type": "null"}]
            }),
            Desc::Union { cases, .. } => json!({
                "oneOf": cases
                    .iter()
                    .map(|case| {
                        let mut schema = self.json_of(&case.desc, definitions);
                        if let Value::Object(object) = &mut schema {
                            object.insert("title".to_owned(), json!(case.title));
                        }
                        schema
                    })
                    .collect::<Vec<_>>()
            }),
            Desc::Mu(index) => {
                let Some(mu) = self.recursive.get(*index) else {
                    return json!({});
                };
                if !definitions.contains_key(&mu.name) {
                    // Placeholder first, so the body's references to itself stop here.
                    definitions.insert(mu.name.clone(), json!({}));
                    let body = self.json_of(&mu.body, definitions);
                    definitions.insert(mu.name.clone(), body);
                }
                json!({"$ref": format!("#/definitions/{}", mu.name)})
            }
        }
    }
}
