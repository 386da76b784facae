//! Halide's error codes (`halide_error_code_t` in HalideRuntime.h): what a
//! compiled pipeline returns when a check fails. An assertion's message
//! (`Expr::error`) carries the code its failure returns.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    Generic = -1,
    ExplicitBoundsTooSmall = -2,
    BadType = -3,
    AccessOutOfBounds = -4,
    BufferAllocationTooLarge = -5,
    BufferExtentsTooLarge = -6,
    ConstraintsMakeRequiredRegionSmaller = -7,
    ConstraintViolated = -8,
    ParamTooSmall = -9,
    ParamTooLarge = -10,
    OutOfMemory = -11,
    BufferArgumentIsNull = -12,
    UnalignedHostPtr = -24,
    BadFold = -25,
    FoldFactorTooSmall = -26,
    RequirementFailed = -27,
    BufferExtentsNegative = -28,
    SpecializeFail = -31,
    HostIsNull = -34,
    BadDimensions = -43,
    StorageBoundTooSmall = -45,
    SplitFactorNotPositive = -46,
}

impl ErrorCode {
    pub fn value(self) -> i32 {
        self as i32
    }
}
