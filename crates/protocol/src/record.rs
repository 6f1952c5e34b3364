//! `record!`: declares a struct whose fields are [`Field`](crate::field::Field)s and derives both
//! of its forms from the one list of fields — binary (the fields in order, data-encoding's `obj`)
//! and JSON (an object with the given names, absent options left out). Records merge into a
//! larger object (`merge_objs`) through `write_json_fields` / `read_json_fields`, which is how a
//! kind's fields sit beside `"kind"` and the manager header; inside a record, a field whose JSON
//! name is `_` is such a merged record. A field named `(dft "name")` is data-encoding's `dft`:
//! left out of JSON when it holds its type's default.

/// See the module documentation.
macro_rules! record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<'a> {
            $( $(#[$field_meta:meta])* $field:ident : $type:ty => $json:tt ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name<'a> {
            $( $(#[$field_meta])* pub $field: $type, )*
        }
        $crate::record::record!(@impl 'a, [$name<'a>], $( $field : $type => $json ),*);
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* $field:ident : $type:ty => $json:tt ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $type, )*
        }
        $crate::record::record!(@impl 'r, [$name], $( $field : $type => $json ),*);
    };
    // A field named `_` in JSON is another record merged into this one (`merge_objs`).
    (@write_json $self:ident, $object:ident, $field:ident, _) => {
        $self.$field.write_json_fields($object)?
    };
    // `(dft "name")`: data-encoding's `dft` — the same binary as `req`; in JSON, left out when
    // the value is the default and the default when absent.
    (@write_json $self:ident, $object:ident, $field:ident, (dft $json:literal)) => {
        if !$crate::record::is_default(&$self.$field) {
            $crate::field::Field::write_json(&$self.$field, $object.key($json))?;
        }
    };
    (@write_json $self:ident, $object:ident, $field:ident, $json:literal) => {
        if $crate::field::Field::json_present(&$self.$field) {
            $crate::field::Field::write_json(&$self.$field, $object.key($json))?;
        }
    };
    (@read_json $object:ident, $path:ident, $type:ty, _) => {
        <$type>::read_json_fields($object, $path)?
    };
    (@read_json $object:ident, $path:ident, $type:ty, (dft $json:literal)) => {
        match $object.get($json) {
            Some(value) => <$type as $crate::field::Field>::read_json(
                value,
                &$crate::json::child($path, $json),
            )?,
            None => Default::default(),
        }
    };
    (@read_json $object:ident, $path:ident, $type:ty, $json:literal) => {
        match $object.get($json) {
            Some(value) => <$type as $crate::field::Field>::read_json(
                value,
                &$crate::json::child($path, $json),
            )?,
            None => <$type as $crate::field::Field>::json_missing().ok_or_else(|| {
                $crate::error::JsonError::new($path, concat!("missing field \"", $json, "\""))
            })?,
        }
    };
    (@impl $lt:lifetime, [$($self_type:tt)+], $( $field:ident : $type:ty => $json:tt ),*) => {
        impl<$lt> $($self_type)+ {
            /// Writes the fields into an open JSON object.
            #[allow(unused_variables)]
            pub(crate) fn write_json_fields(&self, object: &mut $crate::json::ObjectWriter<'_>) -> Result<(), $crate::error::JsonError> {
                $( $crate::record::record!(@write_json self, object, $field, $json); )*
        Ok(())
    }

            /// Reads the fields from a JSON object at `path`.
            #[allow(unused_variables)]
            pub(crate) fn read_json_fields(
                object: &serde_json::Map<String, serde_json::Value>,
                path: &str,
            ) -> Result<Self, $crate::error::JsonError> {
                Ok(Self {
                    $( $field: $crate::record::record!(@read_json object, path, $type, $json), )*
                })
            }
        }

        impl<$lt> $crate::record::JsonFields for $($self_type)+ {
            fn write_fields(&self, object: &mut $crate::json::ObjectWriter<'_>) -> Result<(), $crate::error::JsonError> {
                self.write_json_fields(object)
            }
            fn read_fields(
                object: &serde_json::Map<String, serde_json::Value>,
                path: &str,
            ) -> Result<Self, $crate::error::JsonError> {
                Self::read_json_fields(object, path)
            }
        }

        impl<$lt> $crate::field::Field<$lt> for $($self_type)+ {
            #[allow(unused_variables)]
            fn read(
                reader: &mut kestrel_encoding::Reader<$lt>,
            ) -> Result<Self, $crate::error::DecodeError> {
                Ok(Self {
                    $( $field: <$type as $crate::field::Field>::read(reader)?, )*
                })
            }
            #[allow(unused_variables)]
            fn write(&self, out: &mut Vec<u8>) {
                $( $crate::field::Field::write(&self.$field, out); )*
            }
            fn write_json(&self, out: &mut String) -> Result<(), $crate::error::JsonError> {
                let mut object = $crate::json::ObjectWriter::new(out);
                self.write_json_fields(&mut object)?;
                object.end();
        Ok(())
    }
            fn read_json(
                value: &serde_json::Value,
                path: &str,
            ) -> Result<Self, $crate::error::JsonError> {
                Self::read_json_fields($crate::json::as_object(value, path)?, path)
            }
        }
    };
}

pub(crate) use record;

/// Whether a `dft` field holds its default (and is left out of JSON).
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A value whose JSON form is fields merged into an enclosing object (`merge_objs`): every
/// `record!` struct, so generic wrappers (operation results) can merge them.
pub(crate) trait JsonFields: Sized {
    /// Writes the fields into an open JSON object.
    fn write_fields(
        &self,
        object: &mut crate::json::ObjectWriter<'_>,
    ) -> Result<(), crate::error::JsonError>;
    /// Reads the fields from a JSON object at `path`.
    fn read_fields(
        object: &serde_json::Map<String, serde_json::Value>,
        path: &str,
    ) -> Result<Self, crate::error::JsonError>;
}
