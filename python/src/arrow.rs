//! The URLs of an Arrow string or binary array, read in place through the
//! Arrow C data interface (the `__arrow_c_array__` PyCapsule protocol).
//!
//! Only the four layouts a URL column has are read: `utf8` and `binary`
//! (32-bit offsets), `large_utf8` and `large_binary` (64-bit offsets). The
//! bytes stay in the producer's buffers; the capsules (which release them)
//! are held by the caller for as long as the slices live.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{c_char, c_void, CStr};

/// `struct ArrowSchema` of the C data interface.
#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C data interface.
#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

/// The entries of an Arrow string or binary array: `None` for a null.
pub struct Urls<'a> {
    pub urls: Vec<Option<&'a [u8]>>,
}

/// Reads the array behind a `(schema, array)` capsule pair as returned by
/// `__arrow_c_array__`. The capsules must outlive the returned slices.
pub fn urls_of<'a>(schema: &'a Bound<'_, PyCapsule>, array: &'a Bound<'_, PyCapsule>) -> PyResult<Urls<'a>> {
    let schema = schema.pointer() as *const ArrowSchema;
    let array = array.pointer() as *const ArrowArray;
    if schema.is_null() || array.is_null() {
        return Err(PyTypeError::new_err("an Arrow capsule holds no pointer"));
    }
    // SAFETY: the capsules are the producer's `arrow_schema` and
    // `arrow_array` capsules (their names are checked by PyCapsule's owner
    // only loosely, so the release callbacks are checked below); the structs
    // live as long as the capsules, which the caller holds.
    let (schema, array) = unsafe { (&*schema, &*array) };
    if schema.release.is_none() || array.release.is_none() {
        return Err(PyTypeError::new_err("the Arrow array was already released"));
    }
    // SAFETY: a live schema's format is a NUL-terminated string.
    let format = unsafe { CStr::from_ptr(schema.format) }.to_bytes();
    let wide = match format {
        b"u" | b"z" => false,
        b"U" | b"Z" => true,
        other => {
            return Err(PyTypeError::new_err(format!(
            "URLs must be an Arrow string or binary array (utf8, large_utf8, binary, large_binary), not format {:?}",
            String::from_utf8_lossy(other)
        )))
        }
    };
    let (len, offset) = (array.length as usize, array.offset as usize);
    if array.n_buffers != 3 {
        return Err(PyTypeError::new_err(format!("a string array has 3 buffers, this one {}", array.n_buffers)));
    }
    let mut urls = Vec::with_capacity(len);
    if len == 0 {
        return Ok(Urls { urls });
    }
    // SAFETY: a live array of these formats has 3 buffers: validity (may be
    // null when there are no nulls), offsets (offset + length + 1 entries)
    // and data (as long as the last offset), as the C data interface
    // specifies.
    unsafe {
        let buffers = std::slice::from_raw_parts(array.buffers, 3);
        let validity = buffers[0] as *const u8;
        let data = buffers[2] as *const u8;
        let valid =
            |i: usize| validity.is_null() || array.null_count == 0 || (*validity.add(i / 8) >> (i % 8)) & 1 == 1;
        let bounds = |i: usize| -> (usize, usize) {
            if wide {
                let offsets = buffers[1] as *const i64;
                (*offsets.add(i) as usize, *offsets.add(i + 1) as usize)
            } else {
                let offsets = buffers[1] as *const i32;
                (*offsets.add(i) as usize, *offsets.add(i + 1) as usize)
            }
        };
        for i in offset..offset + len {
            if !valid(i) {
                urls.push(None);
                continue;
            }
            let (start, end) = bounds(i);
            urls.push(Some(if end > start { std::slice::from_raw_parts(data.add(start), end - start) } else { &[] }));
        }
    }
    Ok(Urls { urls })
}
