//! The three benchmarks with their message types written in Kestrel's `encoding` crate
//! (`specs/serialization-benchmarks.md`; the format is data-encoding's, `specs/data-encoding-
//! tutorial.md`). One generic [`KestrelContender`] runs any [`KestrelCase`] in every mode.
//!
//! Every message travels as `dynamic_size(root)`: a 4-byte `uint30` size header, then the root
//! value. The header is the only framing a stream needs, and it also bounds the root, so a list
//! root is a `Variable.list` with no size header of its own. Field types follow the schema's
//! widths: data-encoding has no 32-bit float nor unsigned 32/64-bit integers, so those travel
//! as `int32`/`int64` bit patterns through a [`Convert`]; strings whose bounds the benchmark
//! knows (makes, models, URLs under 255 bytes; snippets under 65536) carry a 1- or 2-byte size
//! header (`dynamic_size ~kind:`Uint8` Variable.string`), and encoding a longer one is an error,
//! not a silent truncation.
//!
//! Reading borrows from the received bytes (`&str` into the buffer); with buffer reuse, the
//! byte buffers, the clients' scratch text and arenas and the servers' result vectors and arenas
//! keep their capacity across iterations, and a frame is read into the previous frame's buffer.

use std::io::{BufRead, Write};

use kestrel_encoding::arena::{self, Arena, NodeCodec, RecursiveArena, Step};
use kestrel_encoding::bytes::{BorrowedBytes, BorrowedStr, Bytes};
use kestrel_encoding::collection::VariableList;
use kestrel_encoding::conv::Converted;
use kestrel_encoding::primitive::{Bool, Float, Int32, Int64, Uint16, Uint8};
use kestrel_encoding::product::{Obj, Req, Tup};
use kestrel_encoding::reader::Reader;
use kestrel_encoding::size::DynamicSize;
use kestrel_encoding::writer::Writer;
use kestrel_encoding::{
    boxed, case, convert, dynamic_size, dynamic_size_with, float, int32, int64, obj, req, tup,
    uint16, uint30, uint8, union, variable_bytes, variable_list, variable_string, BuildError,
    Convert, DecodeError, EncodeError, EncodeErrorKind, Encoding, LengthKind, Mu, TagSize,
};

use super::capnp_side::Fnv1a;
use super::error::{check_failed, BenchError};
use super::harness::{Contender, ExchangeSummary, MessageSizes, Scratch, Setup};
use super::rng::{checked_divide, checked_modulus, Xorshift128, MAKES, MODELS, URL_PREFIX, WORDS};

/// The largest frame a reader accepts: 64 MiB, the traversal limit the peer reads with
/// (capnp's default `ReaderOptions`: 8 Mi words). A frame header above it is an error before
/// any allocation.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// Bytes of the `uint30` frame header.
const FRAME_HEADER_BYTES: usize = 4;

/// One benchmark's messages and work in Kestrel terms. `Self` holds the encodings (built once,
/// in [`KestrelCase::try_new`]) and any client-side buffers reused between iterations.
pub trait KestrelCase: Sized {
    /// The benchmark's name, for error messages.
    const NAME: &'static str;
    /// What the client expects.
    type Expectation: Send + Copy + std::fmt::Display + 'static;

    /// Builds the encodings; `reuse` says whether request vectors keep their capacity.
    fn try_new(reuse: bool) -> Result<Self, BenchError>;

    /// Object mode: build the request, handle it, check the response; nothing serialized.
    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError>;

    /// Builds a request and appends its frame to `out`.
    fn encode_request(
        &mut self,
        rng: &mut Xorshift128,
        out: &mut Vec<u8>,
    ) -> Result<Self::Expectation, BenchError>;

    /// Server: decodes the request frame `request`, handles it, appends the response frame.
    fn handle_request(&mut self, request: &[u8], out: &mut Vec<u8>) -> Result<(), BenchError>;

    /// Client: decodes the response frame and checks it.
    fn check_response(
        &mut self,
        response: &[u8],
        expected: Self::Expectation,
    ) -> Result<(), BenchError>;

    /// Client: decodes the response frame, checks it and digests all of it (agreement test).
    fn digest_response(
        &mut self,
        response: &[u8],
        expected: Self::Expectation,
    ) -> Result<u64, BenchError>;

    /// The expectation as a number, for the agreement test.
    fn expectation_number(expected: Self::Expectation) -> i64;
}

/// Any [`KestrelCase`] as a [`Contender`].
pub struct KestrelContender<T> {
    case: T,
    reuse: bool,
    request_bytes: Vec<u8>,
    response_bytes: Vec<u8>,
}

impl<T> KestrelContender<T> {
    /// A buffer to write a message into: the reused one, cleared, or a fresh one.
    fn take_buffer(reuse: bool, buffer: &mut Vec<u8>) -> Vec<u8> {
        let mut taken = Self::take_read_buffer(reuse, buffer);
        taken.clear();
        taken
    }

    /// A buffer to read a frame into: the reused one as it is ([`read_frame`] overwrites its
    /// bytes, so they need no clearing), or a fresh one.
    fn take_read_buffer(reuse: bool, buffer: &mut Vec<u8>) -> Vec<u8> {
        if reuse {
            std::mem::take(buffer)
        } else {
            Vec::new()
        }
    }
}

/// Reads one frame (header and body) from `input` into `buffer`, which then holds exactly the
/// frame; `Ok(false)` on a clean end of input before the header.
///
/// `buffer` may come in holding an earlier frame: its bytes are overwritten in place, and only
/// the part of a larger frame beyond them is zero-filled first (once, when a frame is larger
/// than any before), so a reused buffer costs one copy of the frame out of `input`.
fn read_frame<R: BufRead>(input: &mut R, buffer: &mut Vec<u8>) -> Result<bool, BenchError> {
    if input.fill_buf()?.is_empty() {
        buffer.clear();
        return Ok(false);
    }
    let mut header = [0_u8; FRAME_HEADER_BYTES];
    input.read_exact(&mut header)?;
    let body_bytes = uint30().decode(&header)? as usize;
    if body_bytes > MAX_FRAME_BYTES {
        return Err(BenchError::FrameTooLarge {
            size_bytes: body_bytes,
            limit_bytes: MAX_FRAME_BYTES,
        });
    }
    buffer.resize(FRAME_HEADER_BYTES + body_bytes, 0);
    let (frame_header, body) = buffer.split_at_mut(FRAME_HEADER_BYTES);
    frame_header.copy_from_slice(&header);
    input.read_exact(body)?;
    Ok(true)
}

impl<'s, T: KestrelCase> Contender<'s> for KestrelContender<T> {
    type Expectation = T::Expectation;

    fn new(setup: Setup, _scratch: &'s mut Scratch) -> Result<Self, BenchError> {
        if setup.packed {
            return Err(BenchError::Unsupported {
                implementation: "kestrel",
                what: "packed variant",
            });
        }
        Ok(Self {
            case: T::try_new(setup.reuse)?,
            reuse: setup.reuse,
            request_bytes: Vec::new(),
            response_bytes: Vec::new(),
        })
    }

    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError> {
        self.case.run_object(rng)
    }

    fn run_bytes(&mut self, rng: &mut Xorshift128) -> Result<MessageSizes, BenchError> {
        let mut request = Self::take_buffer(self.reuse, &mut self.request_bytes);
        let mut response = Self::take_buffer(self.reuse, &mut self.response_bytes);
        let expected = self.case.encode_request(rng, &mut request)?;
        self.case.handle_request(&request, &mut response)?;
        self.case.check_response(&response, expected)?;
        let sizes = MessageSizes {
            request_bytes: request.len() as u64,
            response_bytes: response.len() as u64,
        };
        self.request_bytes = request;
        self.response_bytes = response;
        Ok(sizes)
    }

    fn write_request<W: Write>(
        &mut self,
        rng: &mut Xorshift128,
        output: &mut W,
    ) -> Result<Self::Expectation, BenchError> {
        let mut request = Self::take_buffer(self.reuse, &mut self.request_bytes);
        let expected = self.case.encode_request(rng, &mut request)?;
        output.write_all(&request)?;
        self.request_bytes = request;
        Ok(expected)
    }

    fn serve_request<R: BufRead, W: Write>(
        &mut self,
        input: &mut R,
        output: &mut W,
    ) -> Result<bool, BenchError> {
        let mut request = Self::take_read_buffer(self.reuse, &mut self.request_bytes);
        if !read_frame(input, &mut request)? {
            return Ok(false);
        }
        let mut response = Self::take_buffer(self.reuse, &mut self.response_bytes);
        self.case.handle_request(&request, &mut response)?;
        output.write_all(&response)?;
        self.request_bytes = request;
        self.response_bytes = response;
        Ok(true)
    }

    fn read_response<R: BufRead>(
        &mut self,
        input: &mut R,
        expected: Self::Expectation,
    ) -> Result<(), BenchError> {
        let mut response = Self::take_read_buffer(self.reuse, &mut self.response_bytes);
        if !read_frame(input, &mut response)? {
            return Err(BenchError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        self.case.check_response(&response, expected)?;
        self.response_bytes = response;
        Ok(())
    }

    fn exchange_summary(&mut self, rng: &mut Xorshift128) -> Result<ExchangeSummary, BenchError> {
        let mut request = Vec::new();
        let mut response = Vec::new();
        let expected = self.case.encode_request(rng, &mut request)?;
        self.case.handle_request(&request, &mut response)?;
        let response_digest = self.case.digest_response(&response, expected)?;
        Ok(ExchangeSummary {
            expected: T::expectation_number(expected),
            response_digest,
        })
    }
}

/// `actual` if it is what the client expected, else the failed check.
fn checked<T: PartialEq + std::fmt::Display>(
    benchmark: &'static str,
    expected: T,
    actual: T,
) -> Result<T, BenchError> {
    if actual == expected {
        Ok(actual)
    } else {
        Err(check_failed(benchmark, expected, actual))
    }
}

/// Empties `vector` and gives back its allocation for values of another lifetime (the
/// in-place `collect` keeps the capacity, since the element layout is the same).
fn recycle<'b, T: Recyclable<'b>>(mut vector: Vec<T>) -> Vec<T::With> {
    vector.clear();
    vector.into_iter().map(|_| unreachable_element()).collect()
}

/// A type whose lifetime parameter can be swapped, for [`recycle`].
trait Recyclable<'b> {
    type With;
}

fn unreachable_element<T>() -> T {
    // `recycle` clears the vector first, so the map closure never runs.
    unreachable!("recycle maps an empty vector")
}

// ---------------------------------------------------------------------------------------------
// Shared field encodings.

/// A string with a 1-byte size header.
type String8 = DynamicSize<Bytes<BorrowedStr>>;

fn string8() -> String8 {
    dynamic_size_with(LengthKind::Uint8, variable_string())
}

fn string16() -> String8 {
    dynamic_size_with(LengthKind::Uint16, variable_string())
}

type F32Encoding = Converted<Float32Bits, Int32>;
type U32Encoding = Converted<Uint32Bits, Int32>;
type U64Encoding = Converted<Uint64Bits, Int64>;
type ColorEncoding = Converted<Color, Uint8>;
type WheelRepr = Obj<(Req<Uint16>, Req<F32Encoding>, Req<Bool>)>;
type WheelEncoding = Converted<Wheel, WheelRepr>;
type EngineRepr = Obj<(
    Req<Uint16>,
    Req<Uint8>,
    Req<U32Encoding>,
    Req<Bool>,
    Req<Bool>,
)>;
type EngineEncoding = Converted<Engine, EngineRepr>;
type CarEncoding = Converted<CarConvert, CarRepr>;

/// Declares a unit struct converting a value to and from the bit pattern of an integer
/// encoding (data-encoding has no 32-bit float nor unsigned 32/64-bit integers); the casts
/// keep every bit.
macro_rules! bit_pattern {
    ($(#[$doc:meta])* $name:ident: $value:ty as $repr_encoding:ty, $repr:ty,
     from |$from:ident| $from_body:expr, to |$to:ident| $to_body:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl Convert<$repr_encoding> for $name {
            type Value<'a> = $value;

            fn from_repr<'a>($from: $repr) -> Result<$value, String>
            where
                Self: 'a,
            {
                Ok($from_body)
            }

            fn to_repr($to: &$value) -> $repr {
                $to_body
            }
        }
    };
}

bit_pattern!(
    /// A 32-bit float as its `int32` bit pattern.
    Float32Bits: f32 as Int32, i32,
    from |repr| f32::from_bits(repr as u32),
    to |value| value.to_bits() as i32
);

bit_pattern!(
    /// An unsigned 32-bit integer as its `int32` bit pattern.
    Uint32Bits: u32 as Int32, i32,
    from |repr| repr as u32,
    to |value| *value as i32
);

bit_pattern!(
    /// An unsigned 64-bit integer as its `int64` bit pattern.
    Uint64Bits: u64 as Int64, i64,
    from |repr| repr as u64,
    to |value| *value as i64
);

/// Implements the [`Convert`] of a struct of `Copy` fields to and from the tuple of its fields,
/// in order (an `obj` of the same fields).
macro_rules! convert_fields {
    ($name:ident: $repr_encoding:ty, ($($field:ident: $type:ty),+)) => {
        impl Convert<$repr_encoding> for $name {
            type Value<'a> = $name;

            fn from_repr<'a>(
                repr: <$repr_encoding as Encoding>::Value<'a>,
            ) -> Result<$name, String>
            where
                Self: 'a,
            {
                let ($($field,)+) = repr;
                Ok($name { $($field),+ })
            }

            fn to_repr(value: &$name) -> ($($type,)+) {
                ($(value.$field,)+)
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// carsales

/// A car color (`uint8`, 0 to 8 in the schema's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Color(u8);

/// The number of colors.
const COLOR_COUNT: u8 = 9;

impl Convert<Uint8> for Color {
    type Value<'a> = Color;

    fn from_repr<'a>(repr: <Uint8 as Encoding>::Value<'a>) -> Result<Self::Value<'a>, String>
    where
        Self: 'a,
    {
        if repr < COLOR_COUNT {
            Ok(Color(repr))
        } else {
            Err(format!(
                "color {repr} is not one of the {COLOR_COUNT} colors"
            ))
        }
    }

    fn to_repr(value: &Color) -> u8 {
        value.0
    }
}

/// A wheel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wheel {
    /// Diameter.
    pub diameter: u16,
    /// Air pressure.
    pub air_pressure: f32,
    /// Whether it has snow tires.
    pub snow_tires: bool,
}

convert_fields!(Wheel: WheelRepr, (diameter: u16, air_pressure: f32, snow_tires: bool));

fn wheel_encoding() -> Result<WheelEncoding, BuildError> {
    Ok(convert::<Wheel, _>(obj((
        req("diameter", uint16()),
        req("air_pressure", convert::<Float32Bits, _>(int32())),
        req("snow_tires", kestrel_encoding::bool()),
    ))?))
}

/// An engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Engine {
    /// Horsepower.
    pub horsepower: u16,
    /// Cylinders.
    pub cylinders: u8,
    /// Displacement.
    pub cc: u32,
    /// Whether it burns gas.
    pub uses_gas: bool,
    /// Whether it is electric.
    pub uses_electric: bool,
}

convert_fields!(
    Engine: EngineRepr,
    (horsepower: u16, cylinders: u8, cc: u32, uses_gas: bool, uses_electric: bool)
);

fn engine_encoding() -> Result<EngineEncoding, BuildError> {
    Ok(convert::<Engine, _>(obj((
        req("horsepower", uint16()),
        req("cylinders", uint8()),
        req("cc", convert::<Uint32Bits, _>(int32())),
        req("uses_gas", kestrel_encoding::bool()),
        req("uses_electric", kestrel_encoding::bool()),
    ))?))
}

/// A car; `make` and `model` borrow from the message they were read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Car<'a> {
    /// Make.
    pub make: &'a str,
    /// Model.
    pub model: &'a str,
    /// Color.
    pub color: Color,
    /// Seats.
    pub seats: u8,
    /// Doors.
    pub doors: u8,
    /// The four wheels.
    pub wheels: [Wheel; 4],
    /// Length.
    pub length: u16,
    /// Width.
    pub width: u16,
    /// Height.
    pub height: u16,
    /// Weight.
    pub weight: u32,
    /// Engine.
    pub engine: Engine,
    /// Fuel capacity.
    pub fuel_capacity: f32,
    /// Fuel level.
    pub fuel_level: f32,
    /// Power windows.
    pub has_power_windows: bool,
    /// Power steering.
    pub has_power_steering: bool,
    /// Cruise control.
    pub has_cruise_control: bool,
    /// Cup holders.
    pub cup_holders: u8,
    /// Navigation system.
    pub has_nav_system: bool,
}

impl<'b> Recyclable<'b> for Car<'_> {
    type With = Car<'b>;
}

type Wheels = Tup<(WheelEncoding, WheelEncoding, WheelEncoding, WheelEncoding)>;

/// The car's representation: its 18 fields in order, as two objects side by side (an object
/// holds at most 16 fields; the bytes are those of one 18-field object).
type CarRepr = Tup<(
    Obj<(
        Req<String8>,
        Req<String8>,
        Req<ColorEncoding>,
        Req<Uint8>,
        Req<Uint8>,
        Req<Wheels>,
        Req<Uint16>,
        Req<Uint16>,
        Req<Uint16>,
    )>,
    Obj<(
        Req<U32Encoding>,
        Req<EngineEncoding>,
        Req<F32Encoding>,
        Req<F32Encoding>,
        Req<Bool>,
        Req<Bool>,
        Req<Bool>,
        Req<Uint8>,
        Req<Bool>,
    )>,
)>;

type CarFirst<'a> = (
    &'a str,
    &'a str,
    Color,
    u8,
    u8,
    (Wheel, Wheel, Wheel, Wheel),
    u16,
    u16,
    u16,
);
type CarSecond = (u32, Engine, f32, f32, bool, bool, bool, u8, bool);

/// The [`Convert`] of [`Car`] (a unit struct, since `Car` borrows).
pub struct CarConvert;

impl Convert<CarRepr> for CarConvert {
    type Value<'a> = Car<'a>;

    fn from_repr<'a>(repr: <CarRepr as Encoding>::Value<'a>) -> Result<Self::Value<'a>, String>
    where
        Self: 'a,
    {
        let (first, second) = repr;
        let (make, model, color, seats, doors, wheels, length, width, height) = first;
        let (
            weight,
            engine,
            fuel_capacity,
            fuel_level,
            has_power_windows,
            has_power_steering,
            has_cruise_control,
            cup_holders,
            has_nav_system,
        ) = second;
        Ok(Car {
            make,
            model,
            color,
            seats,
            doors,
            wheels: [wheels.0, wheels.1, wheels.2, wheels.3],
            length,
            width,
            height,
            weight,
            engine,
            fuel_capacity,
            fuel_level,
            has_power_windows,
            has_power_steering,
            has_cruise_control,
            cup_holders,
            has_nav_system,
        })
    }

    fn to_repr<'r>(car: &'r Car<'_>) -> (CarFirst<'r>, CarSecond) {
        let [w0, w1, w2, w3] = car.wheels;
        (
            (
                car.make,
                car.model,
                car.color,
                car.seats,
                car.doors,
                (w0, w1, w2, w3),
                car.length,
                car.width,
                car.height,
            ),
            (
                car.weight,
                car.engine,
                car.fuel_capacity,
                car.fuel_level,
                car.has_power_windows,
                car.has_power_steering,
                car.has_cruise_control,
                car.cup_holders,
                car.has_nav_system,
            ),
        )
    }
}

fn car_encoding() -> Result<CarEncoding, BuildError> {
    let wheel = wheel_encoding()?;
    Ok(convert::<CarConvert, _>(tup((
        obj((
            req("make", string8()),
            req("model", string8()),
            req("color", convert::<Color, _>(uint8())),
            req("seats", uint8()),
            req("doors", uint8()),
            req(
                "wheels",
                tup((wheel.clone(), wheel.clone(), wheel.clone(), wheel))?,
            ),
            req("length", uint16()),
            req("width", uint16()),
            req("height", uint16()),
        ))?,
        obj((
            req("weight", convert::<Uint32Bits, _>(int32())),
            req("engine", engine_encoding()?),
            req("fuel_capacity", convert::<Float32Bits, _>(int32())),
            req("fuel_level", convert::<Float32Bits, _>(int32())),
            req("has_power_windows", kestrel_encoding::bool()),
            req("has_power_steering", kestrel_encoding::bool()),
            req("has_cruise_control", kestrel_encoding::bool()),
            req("cup_holders", uint8()),
            req("has_nav_system", kestrel_encoding::bool()),
        ))?,
    ))?))
}

fn car_value(car: &Car<'_>) -> u64 {
    let mut result = u64::from(car.seats) * 200 + u64::from(car.doors) * 350;
    for wheel in &car.wheels {
        let diameter = u64::from(wheel.diameter);
        result += diameter * diameter + if wheel.snow_tires { 100 } else { 0 };
    }
    result += u64::from(car.length) * u64::from(car.width) * u64::from(car.height) / 50;
    result += u64::from(car.engine.horsepower) * 40;
    if car.engine.uses_electric {
        result += if car.engine.uses_gas { 5000 } else { 3000 };
    }
    result += if car.has_power_windows { 100 } else { 0 };
    result += if car.has_power_steering { 200 } else { 0 };
    result += if car.has_cruise_control { 400 } else { 0 };
    result += if car.has_nav_system { 2000 } else { 0 };
    result += u64::from(car.cup_holders) * 25;
    result
}

fn random_car(rng: &mut Xorshift128) -> Car<'static> {
    let make = rng.pick(&MAKES);
    let model = rng.pick(&MODELS);
    let color = Color(rng.next_less_than(u32::from(COLOR_COUNT)) as u8);
    let seats = 2 + rng.next_less_than(6) as u8;
    let doors = 2 + rng.next_less_than(3) as u8;
    let wheels = std::array::from_fn(|_| Wheel {
        diameter: 25 + rng.next_less_than(15) as u16,
        air_pressure: (30.0 + rng.next_double(20.0)) as f32,
        snow_tires: rng.next_less_than(16) == 0,
    });
    let length = 170 + rng.next_less_than(150) as u16;
    let width = 48 + rng.next_less_than(36) as u16;
    let height = 54 + rng.next_less_than(48) as u16;
    let weight = u32::from(length) * u32::from(width) * u32::from(height) / 200;
    let engine = Engine {
        horsepower: 100 * rng.next_less_than(400) as u16,
        cylinders: 4 + 2 * rng.next_less_than(3) as u8,
        cc: 800 + rng.next_less_than(10000),
        uses_gas: true,
        uses_electric: rng.next_bool(),
    };
    let fuel_capacity = (10.0 + rng.next_double(30.0)) as f32;
    let fuel_level = rng.next_double(f64::from(fuel_capacity)) as f32;
    Car {
        make,
        model,
        color,
        seats,
        doors,
        wheels,
        length,
        width,
        height,
        weight,
        engine,
        fuel_capacity,
        fuel_level,
        has_power_windows: rng.next_bool(),
        has_power_steering: rng.next_bool(),
        has_cruise_control: rng.next_bool(),
        cup_holders: rng.next_less_than(12) as u8,
        has_nav_system: rng.next_bool(),
    }
}

/// carsales with Kestrel's encoding.
pub struct Carsales {
    request: DynamicSize<VariableList<CarEncoding>>,
    response: DynamicSize<U64Encoding>,
    reuse: bool,
    cars: Vec<Car<'static>>,
}

impl Carsales {
    /// Fills `self.cars` (reused or fresh) with a random parking lot; returns its value.
    fn build_request(&mut self, rng: &mut Xorshift128) -> u64 {
        if self.reuse {
            self.cars.clear();
        } else {
            self.cars = Vec::new();
        }
        let count = rng.next_less_than(200);
        let mut total = 0;
        for _ in 0..count {
            let car = random_car(rng);
            total += car_value(&car);
            self.cars.push(car);
        }
        total
    }

    fn decode_total(&self, response: &[u8], expected: u64) -> Result<u64, BenchError> {
        let amount = self.response.decode(response)?;
        checked(Self::NAME, expected, amount)
    }
}

impl KestrelCase for Carsales {
    const NAME: &'static str = "carsales";
    type Expectation = u64;

    fn try_new(reuse: bool) -> Result<Self, BenchError> {
        Ok(Self {
            request: dynamic_size(variable_list(car_encoding()?)?),
            response: dynamic_size(convert::<Uint64Bits, _>(int64())),
            reuse,
            cars: Vec::new(),
        })
    }

    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError> {
        let expected = self.build_request(rng);
        let amount: u64 = self.cars.iter().map(car_value).sum();
        checked(Self::NAME, expected, amount).map(drop)
    }

    fn encode_request(
        &mut self,
        rng: &mut Xorshift128,
        out: &mut Vec<u8>,
    ) -> Result<u64, BenchError> {
        let expected = self.build_request(rng);
        self.request.encode_into(&self.cars, out)?;
        Ok(expected)
    }

    fn handle_request(&mut self, request: &[u8], out: &mut Vec<u8>) -> Result<(), BenchError> {
        let cars = self.request.decode(request)?;
        let amount: u64 = cars.iter().map(car_value).sum();
        self.response.encode_into(&amount, out)?;
        Ok(())
    }

    fn check_response(&mut self, response: &[u8], expected: u64) -> Result<(), BenchError> {
        self.decode_total(response, expected).map(|_| ())
    }

    fn digest_response(&mut self, response: &[u8], expected: u64) -> Result<u64, BenchError> {
        self.decode_total(response, expected)
    }

    fn expectation_number(expected: u64) -> i64 {
        i64::try_from(expected).unwrap_or(i64::MAX)
    }
}

// ---------------------------------------------------------------------------------------------
// catrank
//
// One wire format, read through two views: the same bytes decode as `string` (UTF-8 checked)
// or `bytes` (not checked), so each side checks UTF-8 exactly where the peer does. The server
// searches the snippet, so it reads snippets as strings (the peer calls `to_str()` on them);
// URLs are only copied and the client's check only reads scores, so those stay bytes (the
// peer's text readers do not check them either).

/// A search result as the client builds it and the server reads it: URL, score, snippet.
pub type SearchResult<'a> = (&'a [u8], f64, &'a str);

/// A search result as the client reads the response: URL, score, snippet, all unchecked.
pub type SearchResultBytes<'a> = (&'a [u8], f64, &'a [u8]);

/// Bytes with a size header of a given kind.
type SizedBytes = DynamicSize<Bytes<BorrowedBytes>>;

/// `obj3 (req "url" (dynamic_size ~kind:`Uint8 Variable.bytes)) (req "score" float)
/// (req "snippet" (dynamic_size ~kind:`Uint16 Variable.string))`, framed as a list.
type ResultList = DynamicSize<VariableList<Obj<(Req<SizedBytes>, Req<Float>, Req<String8>)>>>;

/// One search result: `obj3 (req "url" ...) (req "score" float) (req "snippet" ...)`.
type ResultEncoding = Obj<(Req<SizedBytes>, Req<Float>, Req<String8>)>;

/// One search result with the snippet read as bytes.
type ResultBytesEncoding = Obj<(Req<SizedBytes>, Req<Float>, Req<SizedBytes>)>;

impl<'b> Recyclable<'b> for SearchResult<'_> {
    type With = SearchResult<'b>;
}

/// The longest of [`WORDS`], in bytes.
const WORD_MAX_BYTES: usize = {
    let mut longest = 0;
    let mut index = 0;
    while index < WORDS.len() {
        if WORDS[index].len() > longest {
            longest = WORDS[index].len();
        }
        index += 1;
    }
    longest
};

/// The longest URL a search result draws (spec, "catrank"): the prefix and at most 99 letters.
const URL_MAX_BYTES: usize = URL_PREFIX.len() + 99;

/// The longest snippet a search result draws: a space, at most 19 + 19 words, "cat " and "dog ".
const SNIPPET_MAX_BYTES: usize = 1 + 2 * 19 * WORD_MAX_BYTES + "cat ".len() + "dog ".len();

/// A search result's bytes on the wire besides its text: the URL's `uint8` size header, the
/// score's `float` and the snippet's `uint16` size header.
const RESULT_WIRE_OVERHEAD_BYTES: usize = 1 + 8 + 2;

/// The most bytes one search result takes on the wire: its longest URL and snippet and the
/// rest of its fields.
const RESULT_MAX_WIRE_BYTES: usize = URL_MAX_BYTES + SNIPPET_MAX_BYTES + RESULT_WIRE_OVERHEAD_BYTES;

/// The text of one search result as it is drawn.
#[derive(Default)]
struct ResultText {
    /// The URL (bytes: it is ASCII, and the message carries it as bytes).
    url: Vec<u8>,
    /// The snippet.
    snippet: String,
}

/// catrank with Kestrel's encoding.
pub struct Catrank {
    list: ResultList,
    reuse: bool,
    /// The text of the result being drawn (reused from result to result).
    text: ResultText,
    /// Object mode's request: all URLs one after another, and all snippets.
    request_text: ResultText,
    /// Object mode's request, per result: where its URL and its snippet are in `request_text`.
    spans: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// A result of `list` on its own: the client writes the request and the server reads it one
    /// result at a time with it, in `list`'s read and write loops (`list` writes the response).
    element: ResultEncoding,
    /// A result with the snippet read as bytes (the client's view of the response).
    element_bytes: ResultBytesEncoding,
    /// Kept allocations for the request vector (object mode) and for the response vector the
    /// server reads the request into, rescores and sorts.
    request_storage: Vec<SearchResult<'static>>,
    response_storage: Vec<SearchResult<'static>>,
}

/// The most results a fresh vector for a read list is allocated for before reading: the list
/// decoder's own bound for elements of unknown size (`SPECULATIVE_CAPACITY_MAX` in
/// `crates/encoding/src/collection.rs`), more than catrank's largest list (999).
const READ_RESULTS_RESERVE_MAX: usize = 1024;

impl Catrank {
    /// Draws `count` search results in the spec's order (the URL's letters, then whether it
    /// mentions cats and dogs, then the snippet's words) into `text` and hands each to `emit`
    /// as (URL, score, snippet), borrowed from `text`; returns the expected good count, or the
    /// first error `emit` returns. With `keep`, `text` keeps every result's text, one after
    /// another (a built request); without, each result overwrites the last (scratch text).
    fn draw_results<E>(
        rng: &mut Xorshift128,
        count: usize,
        text: &mut ResultText,
        keep: bool,
        mut emit: impl FnMut(&[u8], f64, &str) -> Result<(), E>,
    ) -> Result<u32, E> {
        let mut good_count = 0;
        for index in 0..count {
            let ResultText { url, snippet } = &mut *text;
            if !keep {
                url.clear();
                snippet.clear();
            }
            let url_start = url.len();
            url.extend_from_slice(URL_PREFIX.as_bytes());
            let letter_count = rng.next_less_than(100);
            url.extend((0..letter_count).map(|_| b'a' + rng.next_less_than(26) as u8));
            let is_cat = rng.next_less_than(8) == 0;
            let is_dog = rng.next_less_than(8) == 0;
            if is_cat && !is_dog {
                good_count += 1;
            }
            let snippet_start = snippet.len();
            snippet.push(' ');
            for _ in 0..rng.next_less_than(20) {
                snippet.push_str(rng.pick(&WORDS));
            }
            if is_cat {
                snippet.push_str("cat ");
            }
            if is_dog {
                snippet.push_str("dog ");
            }
            for _ in 0..rng.next_less_than(20) {
                snippet.push_str(rng.pick(&WORDS));
            }
            emit(
                &url[url_start..],
                1000.0 - index as f64,
                &snippet[snippet_start..],
            )?;
        }
        Ok(good_count)
    }

    /// The scratch text of one result: the kept one with reuse, else a fresh one at the largest
    /// size a result can draw (so that it never grows while it is drawn).
    fn take_text(&mut self) -> ResultText {
        if self.reuse {
            std::mem::take(&mut self.text)
        } else {
            ResultText {
                url: Vec::with_capacity(URL_MAX_BYTES),
                snippet: String::with_capacity(SNIPPET_MAX_BYTES),
            }
        }
    }

    /// Object mode's request: draws it into `self.request_text` and `self.spans` (all results
    /// kept, as a built request is); returns the expected good count.
    fn draw_request(&mut self, rng: &mut Xorshift128) -> u32 {
        let count = rng.next_less_than(1000) as usize;
        if self.reuse {
            self.request_text.url.clear();
            self.request_text.snippet.clear();
            self.spans.clear();
        } else {
            // Fresh buffers, each allocated once: the text at its largest possible size, so
            // that it never grows (and copies) while it is drawn.
            self.request_text = ResultText {
                url: Vec::with_capacity(count * URL_MAX_BYTES),
                snippet: String::with_capacity(count * SNIPPET_MAX_BYTES),
            };
            self.spans = Vec::with_capacity(count);
        }
        let spans = &mut self.spans;
        let (mut url_end, mut snippet_end) = (0, 0);
        let drawn = Self::draw_results(
            rng,
            count,
            &mut self.request_text,
            true,
            |url, _score, snippet| {
                let (url_start, snippet_start) = (url_end, snippet_end);
                url_end += url.len();
                snippet_end += snippet.len();
                spans.push((url_start..url_end, snippet_start..snippet_end));
                Ok::<(), std::convert::Infallible>(())
            },
        );
        match drawn {
            Ok(good_count) => good_count,
            Err(never) => match never {},
        }
    }

    /// A vector for results, in a kept allocation when reuse is on.
    fn take_storage(
        reuse: bool,
        storage: &mut Vec<SearchResult<'static>>,
    ) -> Vec<SearchResult<'static>> {
        if reuse {
            std::mem::take(storage)
        } else {
            Vec::new()
        }
    }

    /// The drawn request as results borrowing `urls` and `snippets`.
    fn fill_request<'t>(
        urls: &'t [u8],
        snippets: &'t str,
        spans: &[(std::ops::Range<usize>, std::ops::Range<usize>)],
        request: &mut Vec<SearchResult<'t>>,
    ) {
        request.extend(spans.iter().enumerate().map(|(index, (url, snippet))| {
            (
                &urls[url.clone()],
                1000.0 - index as f64,
                &snippets[snippet.clone()],
            )
        }));
    }
}

/// The server's rescoring of one result (spec, "catrank"): times 10000 when the snippet
/// contains " cat ", divided by 10000 when it contains " dog " (the peer's test, `str::contains`).
#[inline]
fn rescored(score: f64, snippet: &str) -> f64 {
    let mut score = score;
    if snippet.contains(" cat ") {
        score *= 10000.0;
    }
    if snippet.contains(" dog ") {
        score /= 10000.0;
    }
    score
}

/// Sorts by score, highest first. Scores are distinct, so an unstable sort gives the same order
/// as the peer's.
fn sort_by_score<U, S>(results: &mut [(U, f64, S)]) {
    results.sort_unstable_by(|left, right| right.1.total_cmp(&left.1));
}

/// The server's work: rescore, sort by score, highest first.
fn rank<'a>(request: &[SearchResult<'a>], response: &mut Vec<SearchResult<'a>>) {
    response.extend(
        request
            .iter()
            .map(|&(url, score, snippet)| (url, rescored(score, snippet), snippet)),
    );
    sort_by_score(response);
}

/// The client's check: how many leading results scored above 1001.
fn count_good<U, S>(results: &[(U, f64, S)]) -> u32 {
    results
        .iter()
        .take_while(|result| result.1 > 1001.0)
        .count() as u32
}

impl KestrelCase for Catrank {
    const NAME: &'static str = "catrank";
    type Expectation = u32;

    fn try_new(reuse: bool) -> Result<Self, BenchError> {
        let url = || dynamic_size_with(LengthKind::Uint8, variable_bytes());
        let element = || -> Result<ResultEncoding, BuildError> {
            obj((
                req("url", url()),
                req("score", float()),
                req("snippet", string16()),
            ))
        };
        let element_bytes = || -> Result<ResultBytesEncoding, BuildError> {
            obj((
                req("url", url()),
                req("score", float()),
                req(
                    "snippet",
                    dynamic_size_with(LengthKind::Uint16, variable_bytes()),
                ),
            ))
        };
        Ok(Self {
            list: dynamic_size(variable_list(element()?)?),
            element: element()?,
            element_bytes: element_bytes()?,
            reuse,
            request_text: ResultText::default(),
            spans: Vec::new(),
            text: ResultText::default(),
            request_storage: Vec::new(),
            response_storage: Vec::new(),
        })
    }

    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError> {
        let expected = self.draw_request(rng);
        let mut request = recycle(Self::take_storage(self.reuse, &mut self.request_storage));
        let mut response = recycle(Self::take_storage(self.reuse, &mut self.response_storage));
        Self::fill_request(
            &self.request_text.url,
            &self.request_text.snippet,
            &self.spans,
            &mut request,
        );
        rank(&request, &mut response);
        let good_count = count_good(&response);
        self.request_storage = recycle(request);
        self.response_storage = recycle(response);
        checked(Self::NAME, expected, good_count).map(drop)
    }

    fn encode_request(
        &mut self,
        rng: &mut Xorshift128,
        out: &mut Vec<u8>,
    ) -> Result<u32, BenchError> {
        let count = rng.next_less_than(1000) as usize;
        // Room for the largest frame `count` results can make, so that a fresh buffer is
        // allocated once and never grows (a reused one keeps the room it has).
        out.reserve(FRAME_HEADER_BYTES + count * RESULT_MAX_WIRE_BYTES);
        // Each result is written by `element` as soon as it is drawn, from one result's scratch
        // text, as the peer builds each result in its message: the bytes `self.list` writes for
        // the whole list (a frame of `Variable.list element`), without a drawn copy of the whole
        // request's text or a vector of results.
        let mut text = self.take_text();
        let element = &self.element;
        let mut expected = 0;
        let written = write_frame(out, |writer| {
            expected = Self::draw_results(rng, count, &mut text, false, |url, score, snippet| {
                element.write(&(url, score, snippet), writer)
            })?;
            Ok(())
        });
        self.text = text;
        written?;
        Ok(expected)
    }

    fn handle_request(&mut self, request: &[u8], out: &mut Vec<u8>) -> Result<(), BenchError> {
        // Each result is rescored as it is read, straight into the vector that is sorted and
        // written back: one pass over the request, no second vector.
        let mut response = recycle(Self::take_storage(self.reuse, &mut self.response_storage));
        let element = &self.element;
        let read = read_frame_body(request, |reader| {
            response.reserve(
                (reader.remaining_bytes() / RESULT_WIRE_OVERHEAD_BYTES)
                    .min(READ_RESULTS_RESERVE_MAX),
            );
            while reader.remaining_bytes() != 0 {
                let (url, score, snippet) = element.read(reader)?;
                response.push((url, rescored(score, snippet), snippet));
            }
            Ok(())
        });
        if let Err(error) = read {
            self.response_storage = recycle(response);
            return Err(error);
        }
        sort_by_score(&mut response);
        // The response holds the same results, rescored: its frame is the request's size.
        out.reserve(request.len());
        let start = out.len();
        let written = self.list.encode_into(&response, out);
        debug_assert!(written.is_err() || out.len() - start == request.len());
        self.response_storage = recycle(response);
        written?;
        Ok(())
    }

    fn check_response(&mut self, response: &[u8], expected: u32) -> Result<(), BenchError> {
        // The client needs only the count of leading results scored above 1001, so, like the
        // capnp client (which stops at the first lower score and never touches the rest), it
        // reads results up to the first one at or below 1001 and skips the rest of the frame
        // unread; the frame's size header and every result it reads are still checked. The
        // agreement test decodes whole responses (`digest_response`).
        let element = &self.element_bytes;
        let mut good_count = 0_u32;
        read_frame_body(response, |reader| {
            while reader.remaining_bytes() != 0 {
                let (_url, score, _snippet) = element.read(reader)?;
                if score > 1001.0 {
                    good_count += 1;
                } else {
                    break;
                }
            }
            reader.take(reader.remaining_bytes())?;
            Ok(())
        })?;
        checked(Self::NAME, expected, good_count).map(drop)
    }

    fn digest_response(&mut self, response: &[u8], expected: u32) -> Result<u64, BenchError> {
        self.check_response(response, expected)?;
        // The digest covers the checked form: every snippet must be valid UTF-8.
        let results = self.list.decode(response)?;
        let mut digest = Fnv1a::new();
        for (url, score, snippet) in &results {
            digest.write(&score.to_bits().to_le_bytes());
            digest.write(url);
            digest.write(&[0]);
            digest.write(snippet.as_bytes());
            digest.write(&[0]);
        }
        Ok(digest.finish())
    }

    fn expectation_number(expected: u32) -> i64 {
        i64::from(expected)
    }
}

// ---------------------------------------------------------------------------------------------
// eval

/// An arithmetic operation (`uint8`, 0 to 4 in the schema's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Wrapping addition.
    Add,
    /// Wrapping subtraction.
    Subtract,
    /// Wrapping multiplication.
    Multiply,
    /// Division, `i32::MAX` where it would trap.
    Divide,
    /// Remainder, `i32::MAX` where it would trap.
    Modulus,
}

const OPERATIONS: [Operation; 5] = [
    Operation::Add,
    Operation::Subtract,
    Operation::Multiply,
    Operation::Divide,
    Operation::Modulus,
];

impl Convert<Uint8> for Operation {
    type Value<'a> = Operation;

    fn from_repr<'a>(repr: <Uint8 as Encoding>::Value<'a>) -> Result<Self::Value<'a>, String>
    where
        Self: 'a,
    {
        OPERATIONS
            .get(usize::from(repr))
            .copied()
            .ok_or_else(|| format!("operation {repr} is not one of the 5 operations"))
    }

    fn to_repr(value: &Operation) -> u8 {
        *value as u8
    }
}

fn apply(operation: Operation, left: i32, right: i32) -> i32 {
    match operation {
        Operation::Add => left.wrapping_add(right),
        Operation::Subtract => left.wrapping_sub(right),
        Operation::Multiply => left.wrapping_mul(right),
        Operation::Divide => checked_divide(left, right),
        Operation::Modulus => checked_modulus(left, right),
    }
}

/// An expression as a tree of boxes: the operation and its two operands (the value of the
/// `mu` encoding). The benchmark builds and reads [`ExpressionNode`]s in an arena instead; this
/// form is kept as the reference the arena's bytes are checked against
/// ([`eval_request_matches_mu`]).
pub type Expression = (Operation, Operand, Operand);

/// One side of an [`Expression`].
#[derive(Debug, PartialEq)]
pub enum Operand {
    /// A literal.
    Value(i32),
    /// A sub-expression.
    Expression(Box<Expression>),
}

fn operand_value(operand: &Operand) -> Option<&i32> {
    match operand {
        Operand::Value(value) => Some(value),
        Operand::Expression(_) => None,
    }
}

// The union case needs a reference to the payload as stored, which is the box.
#[allow(clippy::borrowed_box)]
fn operand_expression(operand: &Operand) -> Option<&Box<Expression>> {
    match operand {
        Operand::Expression(expression) => Some(expression),
        Operand::Value(_) => None,
    }
}

/// The nesting limit of the expression encoding: the generator never goes past depth 9
/// (`rand(8) < depth` always holds from depth 8), and 64 is the peer's own nesting limit
/// (capnp `ReaderOptions::nesting_limit`), so both implementations reject the same inputs.
pub const EXPRESSION_MAX_DEPTH: usize = 64;

/// The request's format as a `mu` over boxes: `mu expression (obj3 (req "op" uint8)
/// (req "left" operand) (req "right" operand))` with `operand = union ~tag_size:`Uint8
/// [case 0 "value" int32; case 1 "expression" expression]`. [`ExpressionCodec`] reads and
/// writes the same bytes into an arena.
pub fn expression_encoding() -> Result<Mu<Expression>, BuildError> {
    kestrel_encoding::mu_with_max_depth("expression", EXPRESSION_MAX_DEPTH, |expression| {
        let operand = || {
            union(
                TagSize::Uint8,
                (
                    case(0, "value", int32(), operand_value, Operand::Value),
                    case(
                        1,
                        "expression",
                        boxed(expression),
                        operand_expression,
                        Operand::Expression,
                    ),
                ),
            )
        };
        obj((
            req("op", convert::<Operation, _>(uint8())),
            req("left", operand()?),
            req("right", operand()?),
        ))
    })
}

/// One side of an expression in the arena: a literal, or a sub-expression (the next child).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A literal.
    Value(i32),
    /// A sub-expression: the node's next child in the arena.
    Expression,
}

/// One expression in the arena: its operation and two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpressionNode {
    /// The operation.
    pub operation: Operation,
    /// The left side.
    pub left: Side,
    /// The right side.
    pub right: Side,
}

/// Bytes of an `int32`.
const INT32_BYTES: usize = 4;

/// The operand union's tags, as in [`expression_encoding`].
const OPERAND_VALUE_TAG: u16 = 0;
const OPERAND_EXPRESSION_TAG: u16 = 1;

/// The expression format node by node (the bytes of [`expression_encoding`]): a node's head is
/// its operation and left side, and its right side too when the left is a literal; the right
/// side follows the left sub-expression otherwise.
pub struct ExpressionCodec {
    operation: Converted<Operation, Uint8>,
    value: Int32,
}

impl ExpressionCodec {
    // Always inline: it runs about four times per node, and as a call it cost a quarter of the
    // server's decoding instructions (callgrind, eval pipe run).
    #[inline(always)]
    fn read_side(&self, reader: &mut Reader<'_>) -> Result<Side, DecodeError> {
        let (tag, offset) = arena::read_tag(reader, TagSize::Uint8)?;
        match tag {
            OPERAND_VALUE_TAG => Ok(Side::Value(self.value.read(reader)?)),
            OPERAND_EXPRESSION_TAG => Ok(Side::Expression),
            _ => Err(arena::unexpected_tag(tag, offset)),
        }
    }

    #[inline]
    fn write_side(&self, side: Side, writer: &mut Writer<'_>) -> Result<Step, EncodeError> {
        match side {
            Side::Value(value) => {
                arena::write_tag(writer, OPERAND_VALUE_TAG, TagSize::Uint8);
                self.value.write(&value, writer)?;
                Ok(Step::End)
            }
            Side::Expression => {
                arena::write_tag(writer, OPERAND_EXPRESSION_TAG, TagSize::Uint8);
                Ok(Step::Child)
            }
        }
    }
}

/// The step after a side: a sub-expression's bytes follow, or nothing of this side.
#[inline]
fn step_after(side: Side) -> Step {
    match side {
        Side::Value(_) => Step::End,
        Side::Expression => Step::Child,
    }
}

impl NodeCodec for ExpressionCodec {
    type Node<'a> = ExpressionNode;

    /// An operation and two operand tags.
    const MIN_NODE_BYTES: usize = 3;

    /// Exact: the operation, two tags, and an `int32` per literal side.
    #[inline]
    fn node_size_bytes(&self, node: &ExpressionNode) -> usize {
        let literal_bytes = |side: Side| match side {
            Side::Value(_) => INT32_BYTES,
            Side::Expression => 0,
        };
        Self::MIN_NODE_BYTES + literal_bytes(node.left) + literal_bytes(node.right)
    }

    #[inline]
    fn read_head<'a>(
        &self,
        reader: &mut Reader<'a>,
    ) -> Result<(ExpressionNode, Step), DecodeError> {
        let operation = self.operation.read(reader)?;
        let left = self.read_side(reader)?;
        let mut node = ExpressionNode {
            operation,
            left,
            right: Side::Expression,
        };
        if left == Side::Expression {
            return Ok((node, Step::Child));
        }
        node.right = self.read_side(reader)?;
        Ok((node, step_after(node.right)))
    }

    #[inline]
    fn read_after_child<'a>(
        &self,
        node: &mut ExpressionNode,
        child_index: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Step, DecodeError> {
        // The right side follows a left sub-expression; nothing follows a right one.
        if child_index == 0 && node.left == Side::Expression {
            node.right = self.read_side(reader)?;
            return Ok(step_after(node.right));
        }
        Ok(Step::End)
    }

    #[inline]
    fn write_head(
        &self,
        node: &ExpressionNode,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        self.operation.write(&node.operation, writer)?;
        if self.write_side(node.left, writer)? == Step::Child {
            return Ok(Step::Child);
        }
        self.write_side(node.right, writer)
    }

    #[inline]
    fn write_after_child(
        &self,
        node: &ExpressionNode,
        child_index: usize,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        if child_index == 0 && node.left == Side::Expression {
            return self.write_side(node.right, writer);
        }
        Ok(Step::End)
    }
}

/// Builds an expression at `depth` into `arena` (preorder: the node, then its sub-expressions)
/// and returns its value, drawing from the generator in the spec's order. Recursion is bounded
/// by the generator itself: from depth 8 on, every side is a leaf.
fn make_expression(rng: &mut Xorshift128, depth: u32, arena: &mut Arena<ExpressionNode>) -> i32 {
    let operation = OPERATIONS[rng.next_less_than(5) as usize];
    let index = arena.open(ExpressionNode {
        operation,
        left: Side::Expression,
        right: Side::Expression,
    });
    let side = |rng: &mut Xorshift128, arena: &mut Arena<ExpressionNode>| {
        if rng.next_less_than(8) < depth {
            let value = rng.next_less_than(128) as i32 + 1;
            (Side::Value(value), value)
        } else {
            (Side::Expression, make_expression(rng, depth + 1, arena))
        }
    };
    let (left, left_value) = side(rng, arena);
    let (right, right_value) = side(rng, arena);
    if let Some(node) = arena.get_mut(index) {
        node.left = left;
        node.right = right;
    }
    arena.close(index);
    apply(operation, left_value, right_value)
}

/// The most values [`evaluate`] holds at once: one per level of the expression plus one
/// (in reverse preorder, the pending values are those of right sub-expressions along the path
/// to the root, and the node's own two), and levels are at most [`EXPRESSION_MAX_DEPTH`].
const EVALUATION_STACK_VALUES: usize = EXPRESSION_MAX_DEPTH + 1;

/// Evaluates the expression rooted at node 0 of `arena` with no recursion and no allocation:
/// in reverse preorder every node comes after its sub-expressions, the left one last, so their
/// values are on top of the stack (left above right). `None` if the arena is not one whole
/// expression of at most [`EXPRESSION_MAX_DEPTH`] levels.
fn evaluate(arena: &Arena<ExpressionNode>) -> Option<i32> {
    let mut values = [0_i32; EVALUATION_STACK_VALUES];
    let mut length = 0;
    for node in arena.iter().rev() {
        let left = match node.left {
            Side::Value(value) => value,
            Side::Expression => {
                length = usize::checked_sub(length, 1)?;
                values[length]
            }
        };
        let right = match node.right {
            Side::Value(value) => value,
            Side::Expression => {
                length = usize::checked_sub(length, 1)?;
                values[length]
            }
        };
        // `length` is below the array's size here: it only grows by one per node, after
        // this check.
        *values.get_mut(length)? = apply(node.operation, left, right);
        length += 1;
    }
    match values.get(..length)? {
        [value] => Some(*value),
        _ => None,
    }
}

/// The arena's expression as boxes (for [`eval_request_matches_mu`]; recursion bounded by the
/// generator's depth).
fn expression_from_arena(arena: &Arena<ExpressionNode>, index: usize) -> Option<Expression> {
    let node = arena.get(index)?;
    let mut children = arena.children(index);
    let mut operand = |side: Side| -> Option<Operand> {
        Some(match side {
            Side::Value(value) => Operand::Value(value),
            Side::Expression => {
                Operand::Expression(Box::new(expression_from_arena(arena, children.next()?)?))
            }
        })
    };
    let left = operand(node.left)?;
    let right = operand(node.right)?;
    Some((node.operation, left, right))
}

/// Checks the wire format against the `mu` reference for `count` requests from the generator:
/// the arena writes exactly the bytes `mu` writes for the same expression, and `mu` reads them
/// back to it. Returns the number of bytes compared.
pub fn eval_request_matches_mu(count: u64) -> Result<u64, BenchError> {
    let mut eval = Eval::try_new(false)?;
    let reference = dynamic_size(expression_encoding()?);
    let mut rng = Xorshift128::new();
    let mut compared_bytes = 0;
    for _ in 0..count {
        let mut from_arena = Vec::new();
        eval.encode_request(&mut rng, &mut from_arena)?;
        let expression = expression_from_arena(&eval.client_arena, 0)
            .ok_or(BenchError::MalformedArena(Eval::NAME))?;
        let from_mu = reference.encode(&expression)?;
        if from_arena != from_mu {
            return Err(check_failed(
                Eval::NAME,
                format!("{from_mu:02x?}"),
                format!("{from_arena:02x?}"),
            ));
        }
        if reference.decode(&from_arena)? != expression {
            return Err(check_failed(
                Eval::NAME,
                "mu reads the same expression",
                "another",
            ));
        }
        compared_bytes += from_arena.len() as u64;
    }
    Ok(compared_bytes)
}

/// The first allocation of a fresh client arena (without reuse): 256 nodes of 32 bytes (node
/// and subtree end), the
/// 8 KiB of the first segment the peer's default message allocator starts a fresh message with
/// (capnp `SUGGESTED_FIRST_SEGMENT_WORDS`, 1024 words); an expression of the generator has
/// about 33 nodes on average, so it grows past this only for the rare large one.
const CLIENT_ARENA_NODES: usize = 256;

/// eval with Kestrel's encoding: requests are built in and written from an arena, and read into
/// one, with the `uint30` frame header of `dynamic_size`.
pub struct Eval {
    request: RecursiveArena<ExpressionCodec>,
    response: DynamicSize<Int32>,
    reuse: bool,
    client_arena: Arena<ExpressionNode>,
    server_arena: Arena<ExpressionNode>,
}

impl Eval {
    fn decode_value(&self, response: &[u8], expected: i32) -> Result<i32, BenchError> {
        let value = self.response.decode(response)?;
        checked(Self::NAME, expected, value)
    }

    /// Builds a request into the client arena (cleared, or a fresh one without reuse); returns
    /// its value.
    fn build_request(&mut self, rng: &mut Xorshift128) -> i32 {
        if self.reuse {
            self.client_arena.clear();
        } else {
            self.client_arena = Arena::with_capacity(CLIENT_ARENA_NODES);
        }
        make_expression(rng, 0, &mut self.client_arena)
    }

    /// Evaluates the expression in `arena`.
    fn evaluate(arena: &Arena<ExpressionNode>) -> Result<i32, BenchError> {
        evaluate(arena).ok_or(BenchError::MalformedArena(Self::NAME))
    }
}

impl KestrelCase for Eval {
    const NAME: &'static str = "eval";
    type Expectation = i32;

    fn try_new(reuse: bool) -> Result<Self, BenchError> {
        Ok(Self {
            request: RecursiveArena::with_max_depth(
                ExpressionCodec {
                    operation: convert::<Operation, _>(uint8()),
                    value: int32(),
                },
                EXPRESSION_MAX_DEPTH,
            ),
            response: dynamic_size(int32()),
            reuse,
            client_arena: Arena::new(),
            server_arena: Arena::new(),
        })
    }

    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError> {
        let expected = self.build_request(rng);
        let value = Self::evaluate(&self.client_arena)?;
        checked(Self::NAME, expected, value).map(drop)
    }

    fn encode_request(
        &mut self,
        rng: &mut Xorshift128,
        out: &mut Vec<u8>,
    ) -> Result<i32, BenchError> {
        let expected = self.build_request(rng);
        // One allocation of the exact size for a fresh buffer (a reused one has room already).
        out.reserve(FRAME_HEADER_BYTES + self.request.size_hint_bytes(&self.client_arena, 0));
        write_frame(out, |writer| {
            self.request.write(&self.client_arena, 0, writer)?;
            Ok(())
        })?;
        Ok(expected)
    }

    fn handle_request(&mut self, request: &[u8], out: &mut Vec<u8>) -> Result<(), BenchError> {
        let mut arena = if self.reuse {
            std::mem::take(&mut self.server_arena)
        } else {
            Arena::new()
        };
        arena.clear();
        let encoding = &self.request;
        let read = read_frame_body(request, |reader| {
            encoding.read_into(reader, &mut arena)?;
            Ok(())
        });
        let value = read.and_then(|()| Self::evaluate(&arena));
        self.server_arena = arena;
        self.response.encode_into(&value?, out)?;
        Ok(())
    }

    fn check_response(&mut self, response: &[u8], expected: i32) -> Result<(), BenchError> {
        self.decode_value(response, expected).map(|_| ())
    }

    fn digest_response(&mut self, response: &[u8], expected: i32) -> Result<u64, BenchError> {
        Ok(u64::from(self.decode_value(response, expected)? as u32))
    }

    fn expectation_number(expected: i32) -> i64 {
        i64::from(expected)
    }
}

/// Appends a `dynamic_size` frame to `out`: a `uint30` size header, then what `body` writes
/// (the bytes `dynamic_size(e)` writes for `e`'s value).
fn write_frame(
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Writer<'_>) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let header_offset = out.len();
    let mut writer = Writer::new(out);
    writer.put(&[0; FRAME_HEADER_BYTES]);
    body(&mut writer)?;
    let body_bytes = writer.len() - header_offset - FRAME_HEADER_BYTES;
    if body_bytes > UINT30_MAX {
        return Err(BenchError::KestrelEncode(EncodeError::new(
            EncodeErrorKind::SizeLimitExceeded {
                limit_bytes: UINT30_MAX,
                size_bytes: body_bytes,
            },
            header_offset,
        )));
    }
    writer.patch(header_offset, &(body_bytes as u32).to_be_bytes());
    Ok(())
}

/// The largest `uint30`: the largest body a frame header can announce.
const UINT30_MAX: usize = (1 << 30) - 1;

/// Reads a frame that must fill `input`: the `uint30` header, then `body` reads exactly the
/// announced bytes (the checks `dynamic_size(e)` makes: `Not_enough_data`, `Extra_bytes`).
fn read_frame_body<'a>(
    input: &'a [u8],
    body: impl FnOnce(&mut Reader<'a>) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let mut reader = Reader::new(input);
    let body_bytes = uint30().read(&mut reader)? as usize;
    let saved = reader.enter_region(body_bytes)?;
    body(&mut reader)?;
    reader.leave_region(saved)?;
    reader.finish()?;
    Ok(())
}
