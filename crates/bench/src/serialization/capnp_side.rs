//! The three benchmarks written with the `capnp` crate, the peer (`specs/serialization-
//! benchmarks.md`). One generic [`CapnpContender`] runs any [`CapnpCase`] in every mode, so the
//! three benchmarks differ only in how they build, handle and check messages.
//!
//! Buffer reuse follows the peer's own advice: with reuse, both messages are built in
//! [`ScratchSpaceHeapAllocator`]s kept for the whole run (so only the used part is re-zeroed), and
//! messages are read in place from word-aligned buffers without allocating; without reuse, every
//! message gets a fresh heap allocator and is read with the allocating readers. The packed variant
//! adds Cap'n Proto's packing step on both ends.

use std::io::{BufRead, Write};

use capnp::message::{self, ReaderOptions, ScratchSpaceHeapAllocator};
use capnp::traits::Owned;
use capnp::{serialize, serialize_packed};

use super::error::{check_failed, BenchError};
use super::harness::{Contender, ExchangeSummary, MessageSizes, Scratch, Setup};
use super::rng::{checked_divide, checked_modulus, Xorshift128, MAKES, MODELS, URL_PREFIX, WORDS};
use super::schema::{carsales_capnp, catrank_capnp, eval_capnp};

/// One benchmark's message handling in Cap'n Proto terms.
pub trait CapnpCase {
    /// The benchmark's name, for error messages.
    const NAME: &'static str;
    /// The request's root struct.
    type Request: Owned;
    /// The response's root struct.
    type Response: Owned;
    /// What the client expects.
    type Expectation: Send + Copy + std::fmt::Display + 'static;

    /// Fills a request from the generator and returns what the client expects.
    fn setup_request(
        rng: &mut Xorshift128,
        request: <Self::Request as Owned>::Builder<'_>,
    ) -> capnp::Result<Self::Expectation>;

    /// The server's work.
    fn handle_request(
        request: <Self::Request as Owned>::Reader<'_>,
        response: <Self::Response as Owned>::Builder<'_>,
    ) -> capnp::Result<()>;

    /// The client's check.
    fn check_response(
        response: <Self::Response as Owned>::Reader<'_>,
        expected: Self::Expectation,
    ) -> Result<(), BenchError>;

    /// Checks the response, then digests all of it, for the agreement test.
    fn check_and_digest(
        response: <Self::Response as Owned>::Reader<'_>,
        expected: Self::Expectation,
    ) -> Result<u64, BenchError>;

    /// The expectation as a number, for the agreement test.
    fn expectation_number(expected: Self::Expectation) -> i64;
}

/// Buffers kept across iterations when reuse is on.
struct Reused<'s> {
    request_allocator: ScratchSpaceHeapAllocator<'s>,
    response_allocator: ScratchSpaceHeapAllocator<'s>,
    request_read_buffer: &'s mut [u8],
    response_read_buffer: &'s mut [u8],
    request_bytes: Vec<u8>,
    response_bytes: Vec<u8>,
}

/// Any [`CapnpCase`] as a [`Contender`].
pub struct CapnpContender<'s, T> {
    packed: bool,
    reused: Option<Reused<'s>>,
    case: std::marker::PhantomData<T>,
}

/// Reader options for every message: the peer's defaults (64 MiB traversal limit, nesting 64).
fn reader_options() -> ReaderOptions {
    ReaderOptions::new()
}

/// Runs `$body` with `$request` and `$response` bound to fresh message builders: on the reused
/// scratch allocators when reuse is on, on new heap allocators otherwise. The body is compiled
/// once per allocator type.
macro_rules! with_builders {
    ($self:ident, |$request:ident, $response:ident, $bytes:ident| $body:expr) => {
        match &mut $self.reused {
            Some(reused) => {
                #[allow(unused_mut)]
                let mut $request = message::Builder::new(&mut reused.request_allocator);
                #[allow(unused_mut)]
                let mut $response = message::Builder::new(&mut reused.response_allocator);
                let $bytes = Some((
                    &mut reused.request_bytes,
                    &mut reused.response_bytes,
                    &mut *reused.request_read_buffer,
                    &mut *reused.response_read_buffer,
                ));
                $body
            }
            None => {
                #[allow(unused_mut)]
                let mut $request = message::Builder::new_default();
                #[allow(unused_mut)]
                let mut $response = message::Builder::new_default();
                let $bytes: Option<(&mut Vec<u8>, &mut Vec<u8>, &mut [u8], &mut [u8])> = None;
                $body
            }
        }
    };
}

/// Writes `message` as bytes into `buffer` (cleared first), packed or not; returns the length.
fn write_to_vec<A: message::Allocator>(
    packed: bool,
    message: &message::Builder<A>,
    buffer: &mut Vec<u8>,
) -> capnp::Result<usize> {
    buffer.clear();
    if packed {
        serialize_packed::write_message(&mut *buffer, message)?;
    } else {
        serialize::write_message(&mut *buffer, message)?;
    }
    Ok(buffer.len())
}

/// Writes `message` unpacked into the word-aligned `buffer`; returns the length.
fn write_to_aligned<A: message::Allocator>(
    message: &message::Builder<A>,
    buffer: &mut [u8],
) -> capnp::Result<usize> {
    let capacity = buffer.len();
    let mut rest: &mut [u8] = buffer;
    serialize::write_message(&mut rest, message)?;
    Ok(capacity - rest.len())
}

/// Serializes `message`, reads it back and hands the root to `use_root`; returns the
/// serialized length. With `reuse`, the bytes go through the reused buffers and are read without
/// allocating; without, through fresh allocations.
fn round_trip<A, O, R>(
    packed: bool,
    message: &message::Builder<A>,
    reuse: Option<(&mut Vec<u8>, &mut [u8])>,
    use_root: impl FnOnce(O::Reader<'_>) -> Result<R, BenchError>,
) -> Result<(usize, R), BenchError>
where
    A: message::Allocator,
    O: Owned,
{
    match (reuse, packed) {
        (Some((_, aligned)), false) => {
            let length = write_to_aligned(message, aligned)?;
            let mut bytes: &[u8] = &aligned[..length];
            let reader =
                serialize::read_message_from_flat_slice_no_alloc(&mut bytes, reader_options())?;
            let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
            Ok((length, value))
        }
        (Some((buffer, aligned)), true) => {
            let length = write_to_vec(true, message, buffer)?;
            let mut bytes: &[u8] = buffer;
            let reader =
                serialize_packed::read_message_no_alloc(&mut bytes, aligned, reader_options())?;
            let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
            Ok((length, value))
        }
        (None, false) => {
            let bytes = serialize::write_message_to_words(message);
            let mut slice: &[u8] = &bytes;
            let reader = serialize::read_message_from_flat_slice(&mut slice, reader_options())?;
            let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
            Ok((bytes.len(), value))
        }
        (None, true) => {
            let mut bytes = Vec::new();
            let length = write_to_vec(true, message, &mut bytes)?;
            let reader = serialize_packed::read_message(&mut &bytes[..], reader_options())?;
            let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
            Ok((length, value))
        }
    }
}

/// Writes `message` to a stream, packed or not.
fn write_stream<W: Write, A: message::Allocator>(
    packed: bool,
    output: &mut W,
    message: &message::Builder<A>,
) -> capnp::Result<()> {
    if packed {
        serialize_packed::write_message(output, message)
    } else {
        serialize::write_message(output, message)
    }
}

/// Reads one message from a stream and hands its root to `use_root`; `Ok(None)` on a clean end
/// of input. With a reuse buffer the message lands in it without allocating.
fn read_stream<R: BufRead, O: Owned, T>(
    packed: bool,
    input: &mut R,
    buffer: Option<&mut [u8]>,
    use_root: impl FnOnce(O::Reader<'_>) -> Result<T, BenchError>,
) -> Result<Option<T>, BenchError> {
    match (buffer, packed) {
        (Some(buffer), false) => {
            match serialize::try_read_message_no_alloc(input, buffer, reader_options())? {
                Some(reader) => {
                    let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
                    Ok(Some(value))
                }
                None => Ok(None),
            }
        }
        (Some(buffer), true) => {
            match serialize_packed::try_read_message_no_alloc(input, buffer, reader_options())? {
                Some(reader) => {
                    let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
                    Ok(Some(value))
                }
                None => Ok(None),
            }
        }
        (None, false) => match serialize::try_read_message(input, reader_options())? {
            Some(reader) => {
                let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
                Ok(Some(value))
            }
            None => Ok(None),
        },
        (None, true) => match serialize_packed::try_read_message(input, reader_options())? {
            Some(reader) => {
                let value = use_root(reader.get_root::<O::Reader<'_>>()?)?;
                Ok(Some(value))
            }
            None => Ok(None),
        },
    }
}

impl<'s, T: CapnpCase> Contender<'s> for CapnpContender<'s, T> {
    type Expectation = T::Expectation;

    fn new(setup: Setup, scratch: &'s mut Scratch) -> Result<Self, BenchError> {
        let reused = if setup.reuse {
            let [request_build, response_build, request_read, response_read] = scratch.parts();
            Some(Reused {
                request_allocator: ScratchSpaceHeapAllocator::new(request_build),
                response_allocator: ScratchSpaceHeapAllocator::new(response_build),
                request_read_buffer: request_read,
                response_read_buffer: response_read,
                request_bytes: Vec::new(),
                response_bytes: Vec::new(),
            })
        } else {
            None
        };
        Ok(Self {
            packed: setup.packed,
            reused,
            case: std::marker::PhantomData,
        })
    }

    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError> {
        with_builders!(self, |request, response, _bytes| {
            let expected = T::setup_request(rng, request.init_root())?;
            T::handle_request(request.get_root_as_reader()?, response.init_root())?;
            let root = response.get_root_as_reader()?;
            T::check_response(root, expected)
        })
    }

    fn run_bytes(&mut self, rng: &mut Xorshift128) -> Result<MessageSizes, BenchError> {
        let packed = self.packed;
        with_builders!(self, |request, response, bytes| {
            let expected = T::setup_request(rng, request.init_root())?;
            let (request_vec, response_vec, request_aligned, response_aligned) = match bytes {
                Some((a, b, c, d)) => (Some(a), Some(b), Some(c), Some(d)),
                None => (None, None, None, None),
            };
            let (request_length, ()) = round_trip::<_, T::Request, _>(
                packed,
                &request,
                request_vec.zip(request_aligned),
                |reader| Ok(T::handle_request(reader, response.init_root())?),
            )?;
            let (response_length, ()) = round_trip::<_, T::Response, _>(
                packed,
                &response,
                response_vec.zip(response_aligned),
                |reader| T::check_response(reader, expected),
            )?;
            Ok(MessageSizes {
                request_bytes: request_length as u64,
                response_bytes: response_length as u64,
            })
        })
    }

    fn write_request<W: Write>(
        &mut self,
        rng: &mut Xorshift128,
        output: &mut W,
    ) -> Result<Self::Expectation, BenchError> {
        let packed = self.packed;
        with_builders!(self, |request, _response, _bytes| {
            let expected = T::setup_request(rng, request.init_root())?;
            write_stream(packed, output, &request)?;
            Ok(expected)
        })
    }

    fn serve_request<R: BufRead, W: Write>(
        &mut self,
        input: &mut R,
        output: &mut W,
    ) -> Result<bool, BenchError> {
        let packed = self.packed;
        with_builders!(self, |_request, response, bytes| {
            let buffer = bytes.map(|(_, _, request_aligned, _)| request_aligned);
            let handled = read_stream::<_, T::Request, _>(packed, input, buffer, |reader| {
                Ok(T::handle_request(reader, response.init_root())?)
            })?;
            if handled.is_none() {
                return Ok(false);
            }
            write_stream(packed, output, &response)?;
            Ok(true)
        })
    }

    fn read_response<R: BufRead>(
        &mut self,
        input: &mut R,
        expected: Self::Expectation,
    ) -> Result<(), BenchError> {
        let packed = self.packed;
        let buffer = self
            .reused
            .as_mut()
            .map(|reused| &mut *reused.response_read_buffer);
        let checked = read_stream::<_, T::Response, _>(packed, input, buffer, |reader| {
            T::check_response(reader, expected)
        })?;
        checked
            .ok_or_else(|| BenchError::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)))
    }

    fn exchange_summary(&mut self, rng: &mut Xorshift128) -> Result<ExchangeSummary, BenchError> {
        let packed = self.packed;
        with_builders!(self, |request, response, _bytes| {
            let expected = T::setup_request(rng, request.init_root())?;
            round_trip::<_, T::Request, _>(packed, &request, None, |reader| {
                Ok(T::handle_request(reader, response.init_root())?)
            })?;
            let (_, response_digest) =
                round_trip::<_, T::Response, _>(packed, &response, None, |reader| {
                    T::check_and_digest(reader, expected)
                })?;
            Ok(ExchangeSummary {
                expected: T::expectation_number(expected),
                response_digest,
            })
        })
    }
}

/// carsales in Cap'n Proto.
pub struct Carsales;

/// The car colors in schema order, indexed by `rand(9)`.
const COLORS: [carsales_capnp::Color; 9] = {
    use carsales_capnp::Color;
    [
        Color::Black,
        Color::White,
        Color::Red,
        Color::Green,
        Color::Blue,
        Color::Cyan,
        Color::Magenta,
        Color::Yellow,
        Color::Silver,
    ]
};

fn car_value(car: carsales_capnp::car::Reader<'_>) -> capnp::Result<u64> {
    let mut result = u64::from(car.get_seats()) * 200 + u64::from(car.get_doors()) * 350;
    for wheel in car.get_wheels()? {
        let diameter = u64::from(wheel.get_diameter());
        result += diameter * diameter + if wheel.get_snow_tires() { 100 } else { 0 };
    }
    result +=
        u64::from(car.get_length()) * u64::from(car.get_width()) * u64::from(car.get_height()) / 50;
    let engine = car.get_engine()?;
    result += u64::from(engine.get_horsepower()) * 40;
    if engine.get_uses_electric() {
        result += if engine.get_uses_gas() { 5000 } else { 3000 };
    }
    result += if car.get_has_power_windows() { 100 } else { 0 };
    result += if car.get_has_power_steering() { 200 } else { 0 };
    result += if car.get_has_cruise_control() { 400 } else { 0 };
    result += if car.get_has_nav_system() { 2000 } else { 0 };
    result += u64::from(car.get_cup_holders()) * 25;
    Ok(result)
}

fn random_car(rng: &mut Xorshift128, mut car: carsales_capnp::car::Builder<'_>) {
    car.set_make(rng.pick(&MAKES));
    car.set_model(rng.pick(&MODELS));
    car.set_color(COLORS[rng.next_less_than(COLORS.len() as u32) as usize]);
    car.set_seats(2 + rng.next_less_than(6) as u8);
    car.set_doors(2 + rng.next_less_than(3) as u8);
    {
        let mut wheels = car.reborrow().init_wheels(4);
        for index in 0..4 {
            let mut wheel = wheels.reborrow().get(index);
            wheel.set_diameter(25 + rng.next_less_than(15) as u16);
            wheel.set_air_pressure((30.0 + rng.next_double(20.0)) as f32);
            wheel.set_snow_tires(rng.next_less_than(16) == 0);
        }
    }
    let length = 170 + rng.next_less_than(150) as u16;
    let width = 48 + rng.next_less_than(36) as u16;
    let height = 54 + rng.next_less_than(48) as u16;
    car.set_length(length);
    car.set_width(width);
    car.set_height(height);
    car.set_weight(u32::from(length) * u32::from(width) * u32::from(height) / 200);
    {
        let mut engine = car.reborrow().init_engine();
        engine.set_horsepower(100 * rng.next_less_than(400) as u16);
        engine.set_cylinders(4 + 2 * rng.next_less_than(3) as u8);
        engine.set_cc(800 + rng.next_less_than(10000));
        engine.set_uses_gas(true);
        engine.set_uses_electric(rng.next_bool());
    }
    let fuel_capacity = (10.0 + rng.next_double(30.0)) as f32;
    car.set_fuel_capacity(fuel_capacity);
    car.set_fuel_level(rng.next_double(f64::from(fuel_capacity)) as f32);
    car.set_has_power_windows(rng.next_bool());
    car.set_has_power_steering(rng.next_bool());
    car.set_has_cruise_control(rng.next_bool());
    car.set_cup_holders(rng.next_less_than(12) as u8);
    car.set_has_nav_system(rng.next_bool());
}

impl CapnpCase for Carsales {
    const NAME: &'static str = "carsales";
    type Request = carsales_capnp::parking_lot::Owned;
    type Response = carsales_capnp::total_value::Owned;
    type Expectation = u64;

    fn setup_request(
        rng: &mut Xorshift128,
        request: carsales_capnp::parking_lot::Builder<'_>,
    ) -> capnp::Result<u64> {
        let count = rng.next_less_than(200);
        let mut cars = request.init_cars(count);
        let mut total = 0;
        for index in 0..count {
            let mut car = cars.reborrow().get(index);
            random_car(rng, car.reborrow());
            total += car_value(car.into_reader())?;
        }
        Ok(total)
    }

    fn handle_request(
        request: carsales_capnp::parking_lot::Reader<'_>,
        mut response: carsales_capnp::total_value::Builder<'_>,
    ) -> capnp::Result<()> {
        let mut total = 0;
        for car in request.get_cars()? {
            total += car_value(car)?;
        }
        response.set_amount(total);
        Ok(())
    }

    fn check_response(
        response: carsales_capnp::total_value::Reader<'_>,
        expected: u64,
    ) -> Result<(), BenchError> {
        let amount = response.get_amount();
        if amount == expected {
            Ok(())
        } else {
            Err(check_failed(Self::NAME, expected, amount))
        }
    }

    fn check_and_digest(
        response: carsales_capnp::total_value::Reader<'_>,
        expected: u64,
    ) -> Result<u64, BenchError> {
        Self::check_response(response, expected)?;
        Ok(response.get_amount())
    }

    fn expectation_number(expected: u64) -> i64 {
        i64::try_from(expected).unwrap_or(i64::MAX)
    }
}

/// catrank in Cap'n Proto.
pub struct Catrank;

impl CapnpCase for Catrank {
    const NAME: &'static str = "catrank";
    type Request = catrank_capnp::search_result_list::Owned;
    type Response = catrank_capnp::search_result_list::Owned;
    type Expectation = u32;

    fn setup_request(
        rng: &mut Xorshift128,
        request: catrank_capnp::search_result_list::Builder<'_>,
    ) -> capnp::Result<u32> {
        let count = rng.next_less_than(1000);
        let mut results = request.init_results(count);
        let mut good_count = 0;
        let mut snippet = String::new();
        for index in 0..count {
            let mut result = results.reborrow().get(index);
            result.set_score(1000.0 - f64::from(index));
            let url_length = rng.next_less_than(100);
            {
                let url = result
                    .reborrow()
                    .init_url(URL_PREFIX.len() as u32 + url_length);
                let bytes = url.as_bytes_mut();
                bytes[..URL_PREFIX.len()].copy_from_slice(URL_PREFIX.as_bytes());
                for byte in &mut bytes[URL_PREFIX.len()..] {
                    *byte = b'a' + rng.next_less_than(26) as u8;
                }
            }
            let is_cat = rng.next_less_than(8) == 0;
            let is_dog = rng.next_less_than(8) == 0;
            if is_cat && !is_dog {
                good_count += 1;
            }
            snippet.clear();
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
            result.set_snippet(snippet.as_str());
        }
        Ok(good_count)
    }

    fn handle_request(
        request: catrank_capnp::search_result_list::Reader<'_>,
        response: catrank_capnp::search_result_list::Builder<'_>,
    ) -> capnp::Result<()> {
        let results = request.get_results()?;
        let mut scored = Vec::with_capacity(results.len() as usize);
        for result in results {
            let mut score = result.get_score();
            let snippet = result.get_snippet()?.to_str()?;
            if snippet.contains(" cat ") {
                score *= 10000.0;
            }
            if snippet.contains(" dog ") {
                score /= 10000.0;
            }
            scored.push((score, result));
        }
        // Highest score first; scores are distinct, so stability does not matter.
        scored.sort_unstable_by(|left, right| right.0.total_cmp(&left.0));
        let mut list = response.init_results(scored.len() as u32);
        for (index, (score, result)) in scored.into_iter().enumerate() {
            let mut item = list.reborrow().get(index as u32);
            item.set_score(score);
            item.set_url(result.get_url()?);
            item.set_snippet(result.get_snippet()?);
        }
        Ok(())
    }

    fn check_response(
        response: catrank_capnp::search_result_list::Reader<'_>,
        expected: u32,
    ) -> Result<(), BenchError> {
        let mut good_count = 0;
        for result in response.get_results()? {
            if result.get_score() > 1001.0 {
                good_count += 1;
            } else {
                break;
            }
        }
        if good_count == expected {
            Ok(())
        } else {
            Err(check_failed(Self::NAME, expected, good_count))
        }
    }

    fn check_and_digest(
        response: catrank_capnp::search_result_list::Reader<'_>,
        expected: u32,
    ) -> Result<u64, BenchError> {
        Self::check_response(response, expected)?;
        let mut digest = Fnv1a::new();
        for result in response.get_results()? {
            digest.write(&result.get_score().to_bits().to_le_bytes());
            digest.write(result.get_url()?.as_bytes());
            digest.write(&[0]);
            digest.write(result.get_snippet()?.as_bytes());
            digest.write(&[0]);
        }
        Ok(digest.finish())
    }

    fn expectation_number(expected: u32) -> i64 {
        i64::from(expected)
    }
}

/// FNV-1a, a small stable digest for comparing responses across implementations.
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a {
    /// The FNV-1a offset basis.
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// Mixes `bytes` in.
    pub fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// eval in Cap'n Proto.
pub struct Eval;

const OPERATIONS: [eval_capnp::Operation; 5] = {
    use eval_capnp::Operation;
    [
        Operation::Add,
        Operation::Subtract,
        Operation::Multiply,
        Operation::Divide,
        Operation::Modulus,
    ]
};

fn apply(operation: eval_capnp::Operation, left: i32, right: i32) -> i32 {
    use eval_capnp::Operation;
    match operation {
        Operation::Add => left.wrapping_add(right),
        Operation::Subtract => left.wrapping_sub(right),
        Operation::Multiply => left.wrapping_mul(right),
        Operation::Divide => checked_divide(left, right),
        Operation::Modulus => checked_modulus(left, right),
    }
}

/// Builds an expression at `depth` and returns its value. Recursion is bounded by the generator
/// itself: from depth 8 on every side is a leaf (`rand(8) < depth`).
fn make_expression(
    rng: &mut Xorshift128,
    mut expression: eval_capnp::expression::Builder<'_>,
    depth: u32,
) -> i32 {
    let operation = OPERATIONS[rng.next_less_than(5) as usize];
    expression.set_op(operation);
    let left = if rng.next_less_than(8) < depth {
        let value = rng.next_less_than(128) as i32 + 1;
        expression.reborrow().init_left().set_value(value);
        value
    } else {
        make_expression(
            rng,
            expression.reborrow().init_left().init_expression(),
            depth + 1,
        )
    };
    let right = if rng.next_less_than(8) < depth {
        let value = rng.next_less_than(128) as i32 + 1;
        expression.reborrow().init_right().set_value(value);
        value
    } else {
        make_expression(
            rng,
            expression.reborrow().init_right().init_expression(),
            depth + 1,
        )
    };
    apply(operation, left, right)
}

/// Evaluates an expression. Recursion is bounded by the reader's nesting limit (64, the peer's
/// default), which rejects deeper messages before they are walked.
fn evaluate(expression: eval_capnp::expression::Reader<'_>) -> capnp::Result<i32> {
    use eval_capnp::expression::{left, right};
    let left = match expression.get_left().which()? {
        left::Value(value) => value,
        left::Expression(inner) => evaluate(inner?)?,
    };
    let right = match expression.get_right().which()? {
        right::Value(value) => value,
        right::Expression(inner) => evaluate(inner?)?,
    };
    Ok(apply(expression.get_op()?, left, right))
}

impl CapnpCase for Eval {
    const NAME: &'static str = "eval";
    type Request = eval_capnp::expression::Owned;
    type Response = eval_capnp::evaluation_result::Owned;
    type Expectation = i32;

    fn setup_request(
        rng: &mut Xorshift128,
        request: eval_capnp::expression::Builder<'_>,
    ) -> capnp::Result<i32> {
        Ok(make_expression(rng, request, 0))
    }

    fn handle_request(
        request: eval_capnp::expression::Reader<'_>,
        mut response: eval_capnp::evaluation_result::Builder<'_>,
    ) -> capnp::Result<()> {
        response.set_value(evaluate(request)?);
        Ok(())
    }

    fn check_response(
        response: eval_capnp::evaluation_result::Reader<'_>,
        expected: i32,
    ) -> Result<(), BenchError> {
        let value = response.get_value();
        if value == expected {
            Ok(())
        } else {
            Err(check_failed(Self::NAME, expected, value))
        }
    }

    fn check_and_digest(
        response: eval_capnp::evaluation_result::Reader<'_>,
        expected: i32,
    ) -> Result<u64, BenchError> {
        Self::check_response(response, expected)?;
        Ok(u64::from(response.get_value() as u32))
    }

    fn expectation_number(expected: i32) -> i64 {
        i64::from(expected)
    }
}
