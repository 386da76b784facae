//! How the IR's and the schedules' plain values are stored: enums as tags,
//! structs field by field. Exprs inside them (split factors, bounds,
//! specialization conditions) are stored as indices into the file's
//! expression table, through the `ExprTable` / `ExprLookup` the encoder
//! and decoder provide.

use super::wire::{corrupt, Bytes, Cursor, Decode, Encode, HasBytes, HasCursor};
use crate::device_api::DeviceApi;
use crate::error::Result;
use crate::ir::{
    BinOp, Expr, ForType, Intrinsic, MathFn, MemoryType, Type, TypeCode, VectorReduceOp,
};
use crate::lang::function::Specialization;
use crate::lang::trace_settings::TraceSettings;
use crate::schedule::{PrefetchBoundStrategy, PrefetchDirective, 
    Bound, DeviceLoop, Dim, FuncSchedule, FuseLevel, GpuLoop, LoopAlignStrategy, LoopLevel,
    Partition, Split, StageSchedule, StorageFold, TailStrategy,
};
use crate::tagged_enum_codec;

/// An encoder that stores Exprs in a table and refers to them by index.
pub trait ExprTable: HasBytes {
    fn expr_index(&mut self, e: &Expr) -> u64;
}

/// A decoder that has the table of Exprs read so far.
pub trait ExprLookup<'a>: HasCursor<'a> {
    fn expr_at(&self, index: u64) -> Result<Expr>;
}

impl<E: ExprTable> Encode<E> for Expr {
    fn encode(&self, e: &mut E) {
        let i = e.expr_index(self);
        e.bytes().u64(i)
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for Expr {
    fn decode(d: &mut D) -> Result<Self> {
        let i = d.cursor().u64()?;
        d.expr_at(i)
    }
}

tagged_enum_codec!(TypeCode { Int = 0, UInt = 1, Float = 2, Handle = 3, BFloat = 4 });

impl<E: HasBytes> Encode<E> for Type {
    fn encode(&self, e: &mut E) {
        self.code.encode(e);
        self.bits.encode(e);
        self.lanes.encode(e);
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for Type {
    fn decode(d: &mut D) -> Result<Self> {
        let t = Type::new(TypeCode::decode(d)?, u8::decode(d)?, u16::decode(d)?);
        if t.lanes == 0 || t.bits == 0 {
            return Err(corrupt("a type has no bits or lanes"));
        }
        Ok(t)
    }
}

tagged_enum_codec!(BinOp {
    Add = 0, Sub = 1, Mul = 2, Div = 3, Mod = 4, Min = 5, Max = 6, EQ = 7, NE = 8,
    LT = 9, LE = 10, GT = 11, GE = 12, And = 13, Or = 14,
});
tagged_enum_codec!(VectorReduceOp {
    Add = 0, SaturatingAdd = 1, Mul = 2, Min = 3, Max = 4, And = 5, Or = 6,
});
tagged_enum_codec!(MathFn {
    Sqrt = 0, Sin = 1, Cos = 2, Tan = 3, Asin = 4, Acos = 5, Atan = 6, Atan2 = 7, Sinh = 8,
    Cosh = 9, Tanh = 10, Asinh = 11, Acosh = 12, Atanh = 13, Exp = 14, Log = 15, Pow = 16,
    Floor = 17, Ceil = 18, Round = 19, Trunc = 20, IsNan = 21, IsInf = 22, IsFinite = 23,
    FastSin = 24, FastCos = 25, FastExp = 26, FastLog = 27, FastPow = 28, FastInverse = 29,
    FastInverseSqrt = 30, Erf = 31, Hypot = 32,
});

/// Intrinsic tags; `Math(_)` is tag 0 followed by the function's own tag.
macro_rules! intrinsic_tags {
    ($($v:ident = $n:literal),* $(,)?) => {
        impl<E: HasBytes> Encode<E> for Intrinsic {
            fn encode(&self, e: &mut E) {
                match self {
                    Intrinsic::Math(m) => {
                        e.bytes().u64(0);
                        m.encode(e);
                    }
                    $(Intrinsic::$v => e.bytes().u64($n),)*
                }
            }
        }
        impl<'a, D: HasCursor<'a>> Decode<D> for Intrinsic {
            fn decode(d: &mut D) -> Result<Self> {
                match d.cursor().u64()? {
                    0 => Ok(Intrinsic::Math(MathFn::decode(d)?)),
                    $($n => Ok(Intrinsic::$v),)*
                    _ => Err(corrupt("unknown intrinsic")),
                }
            }
        }
    };
}
intrinsic_tags!(
    BitwiseAnd = 1,
    BitwiseOr = 2,
    BitwiseXor = 3,
    BitwiseNot = 4,
    ShiftLeft = 5,
    ShiftRight = 6,
    Abs = 7,
    Absd = 8,
    Popcount = 9,
    CountLeadingZeros = 10,
    CountTrailingZeros = 11,
    Likely = 12,
    LikelyIfInnermost = 13,
    IfThenElse = 14,
    Print = 15,
    Require = 16,
    Undef = 17,
    SaturatingAdd = 18,
    SaturatingSub = 19,
    SaturatingCast = 20,
    HalvingAdd = 21,
    HalvingSub = 22,
    RoundingHalvingAdd = 23,
    WideningAdd = 24,
    WideningSub = 25,
    WideningMul = 26,
    MulShiftRight = 27,
    RoundingMulShiftRight = 28,
    DivRoundToZero = 29,
    ModRoundToZero = 30,
    BufferGetHost = 31,
    BufferGetMin = 32,
    BufferGetExtent = 33,
    BufferGetStride = 34,
    BufferGetDimensions = 35,
    BufferGetTypeCode = 36,
    BufferGetTypeBits = 37,
    BufferGetTypeLanes = 38,
    BufferIsBoundsQuery = 39,
    Error = 40,
    SignedIntegerOverflow = 41,
    PromiseClamped = 42,
    StrictFloat = 43,
    WidenRightAdd = 44,
    WidenRightMul = 45,
    WidenRightSub = 46,
    WideningShiftLeft = 47,
    WideningShiftRight = 48,
    RoundingShiftLeft = 49,
    RoundingShiftRight = 50,
    ExtractBits = 51,
    ConcatBits = 52,
    UnsafePromiseClamped = 53,
    MemoizeExpr = 54,
    ScatterGather = 55,
    TargetArchIs = 56,
    TargetOsIs = 57,
    TargetBits = 58,
    TargetHasFeature = 59,
    TargetNaturalVectorSize = 60,
    Random = 61,
    Trace = 62,
    ReturnSecond = 63,
    MakeStruct = 64,
    Prefetch = 65,
    ExternBuffer = 66,
    PrefetchPlaceholder = 67,
    Mux = 68,
);

tagged_enum_codec!(ForType { Serial = 0, Parallel = 1, Vectorized = 2, Unrolled = 3, Fork = 4 });
tagged_enum_codec!(MemoryType {
    Auto = 0, Heap = 1, Stack = 2, Register = 3, GPUShared = 4, GPUTexture = 5,
    LockedCache = 6, VTCM = 7,
});
tagged_enum_codec!(DeviceApi {
    None = 0, Host = 1, DefaultGpu = 2, Cuda = 3, OpenCl = 4, Metal = 5, Hexagon = 6,
    HexagonDma = 7, D3d12Compute = 8, Vulkan = 9, WebGpu = 10,
});
tagged_enum_codec!(TailStrategy {
    RoundUp = 0, GuardWithIf = 1, Predicate = 2, PredicateLoads = 3, PredicateStores = 4,
    ShiftInwards = 5, ShiftInwardsAndBlend = 6, RoundUpAndBlend = 7, Auto = 8,
});
tagged_enum_codec!(GpuLoop { Block = 0, Thread = 1, Lane = 2 });
tagged_enum_codec!(PrefetchBoundStrategy { Clamp = 0, GuardWithIf = 1, NonFaulting = 2 });
tagged_enum_codec!(Partition { Auto = 0, Never = 1, Always = 2 });
tagged_enum_codec!(LoopAlignStrategy { AlignStart = 0, AlignEnd = 1, NoAlign = 2, Auto = 3 });

impl<E: HasBytes> Encode<E> for LoopLevel {
    fn encode(&self, e: &mut E) {
        match self {
            LoopLevel::Undefined => e.bytes().u64(0),
            LoopLevel::Inlined => e.bytes().u64(1),
            LoopLevel::Root => e.bytes().u64(2),
            LoopLevel::At { func, var, stage } => {
                e.bytes().u64(3);
                (func.clone(), var.clone()).encode(e);
                stage.encode(e);
            }
        }
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for LoopLevel {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(match d.cursor().u64()? {
            0 => LoopLevel::Undefined,
            1 => LoopLevel::Inlined,
            2 => LoopLevel::Root,
            3 => LoopLevel::At {
                func: String::decode(d)?,
                var: String::decode(d)?,
                stage: Option::decode(d)?,
            },
            _ => return Err(corrupt("unknown loop level")),
        })
    }
}

impl<E: ExprTable> Encode<E> for Split {
    fn encode(&self, e: &mut E) {
        match self {
            Split::Split {
                old,
                outer,
                inner,
                factor,
                tail,
            } => {
                e.bytes().u64(0);
                (old.clone(), outer.clone()).encode(e);
                inner.encode(e);
                factor.encode(e);
                tail.encode(e);
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                e.bytes().u64(1);
                (inner.clone(), outer.clone()).encode(e);
                fused.encode(e);
            }
            Split::Rename { old, new } => {
                e.bytes().u64(2);
                (old.clone(), new.clone()).encode(e);
            }
        }
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for Split {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(match d.cursor().u64()? {
            0 => Split::Split {
                old: String::decode(d)?,
                outer: String::decode(d)?,
                inner: String::decode(d)?,
                factor: Expr::decode(d)?,
                tail: TailStrategy::decode(d)?,
            },
            1 => Split::Fuse {
                inner: String::decode(d)?,
                outer: String::decode(d)?,
                fused: String::decode(d)?,
            },
            2 => Split::Rename {
                old: String::decode(d)?,
                new: String::decode(d)?,
            },
            _ => return Err(corrupt("unknown split")),
        })
    }
}

impl<E: HasBytes> Encode<E> for DeviceLoop {
    fn encode(&self, e: &mut E) {
        let DeviceLoop { gpu, api } = self;
        gpu.encode(e);
        api.encode(e);
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for DeviceLoop {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(DeviceLoop {
            gpu: Option::decode(d)?,
            api: DeviceApi::decode(d)?,
        })
    }
}

impl<E: HasBytes> Encode<E> for Dim {
    fn encode(&self, e: &mut E) {
        let Dim {
            var,
            for_type,
            is_rvar,
            partition,
            device,
        } = self;
        var.encode(e);
        for_type.encode(e);
        is_rvar.encode(e);
        partition.encode(e);
        device.encode(e);
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for Dim {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(Dim {
            var: String::decode(d)?,
            for_type: ForType::decode(d)?,
            is_rvar: bool::decode(d)?,
            partition: Partition::decode(d)?,
            device: Option::decode(d)?,
        })
    }
}

impl<E: HasBytes> Encode<E> for FuseLevel {
    fn encode(&self, e: &mut E) {
        let FuseLevel { level, align } = self;
        level.encode(e);
        align.encode(e);
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for FuseLevel {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(FuseLevel {
            level: LoopLevel::decode(d)?,
            align: Vec::decode(d)?,
        })
    }
}

impl<E: ExprTable> Encode<E> for StageSchedule {
    fn encode(&self, e: &mut E) {
        let StageSchedule {
            splits,
            dims,
            touched,
            atomic,
            override_atomic_check,
            allow_race_conditions,
            fuse_level,
            prefetches,
        } = self;
        splits.encode(e);
        dims.encode(e);
        for flag in [
            touched,
            atomic,
            override_atomic_check,
            allow_race_conditions,
        ] {
            flag.encode(e);
        }
        fuse_level.encode(e);
        prefetches.encode(e);
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for StageSchedule {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(StageSchedule {
            splits: Vec::decode(d)?,
            dims: Vec::decode(d)?,
            touched: bool::decode(d)?,
            atomic: bool::decode(d)?,
            override_atomic_check: bool::decode(d)?,
            allow_race_conditions: bool::decode(d)?,
            fuse_level: Option::decode(d)?,
            prefetches: Vec::decode(d)?,
        })
    }
}

impl<E: ExprTable> Encode<E> for PrefetchDirective {
    fn encode(&self, e: &mut E) {
        let PrefetchDirective { name, at, from, offset, strategy } = self;
        name.encode(e);
        at.encode(e);
        from.encode(e);
        offset.encode(e);
        strategy.encode(e);
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for PrefetchDirective {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(PrefetchDirective {
            name: String::decode(d)?,
            at: String::decode(d)?,
            from: String::decode(d)?,
            offset: Expr::decode(d)?,
            strategy: PrefetchBoundStrategy::decode(d)?,
        })
    }
}

impl<E: ExprTable> Encode<E> for Bound {
    fn encode(&self, e: &mut E) {
        let Bound {
            var,
            min,
            extent,
            modulus,
            remainder,
        } = self;
        var.encode(e);
        for x in [min, extent, modulus, remainder] {
            x.encode(e);
        }
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for Bound {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(Bound {
            var: String::decode(d)?,
            min: Option::decode(d)?,
            extent: Option::decode(d)?,
            modulus: Option::decode(d)?,
            remainder: Option::decode(d)?,
        })
    }
}

impl<E: ExprTable> Encode<E> for StorageFold {
    fn encode(&self, e: &mut E) {
        let StorageFold {
            var,
            factor,
            fold_forward,
        } = self;
        var.encode(e);
        factor.encode(e);
        fold_forward.encode(e);
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for StorageFold {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(StorageFold {
            var: String::decode(d)?,
            factor: Expr::decode(d)?,
            fold_forward: bool::decode(d)?,
        })
    }
}

/// A Func's schedule. The `hl.LoopLevel` handles it remembers stay behind
/// (they are objects of the writing process), and a memoized Func gets a
/// fresh cache id when read (`memoized` is only a flag in the file).
impl<E: ExprTable> Encode<E> for FuncSchedule {
    fn encode(&self, e: &mut E) {
        let FuncSchedule {
            compute_level,
            store_level,
            bounds,
            folds,
            storage_dims,
            memory_type,
            hoist_storage_level,
            level_handles: _,
            memoized,
            storage_bounds,
            storage_alignments,
            copy_to_device,
            memoize_eviction_key,
            debug_file,
            async_,
            ring_buffer,
        } = self;
        compute_level.encode(e);
        store_level.encode(e);
        bounds.encode(e);
        folds.encode(e);
        storage_dims.encode(e);
        memory_type.encode(e);
        hoist_storage_level.encode(e);
        memoized.is_some().encode(e);
        storage_bounds.encode(e);
        storage_alignments.encode(e);
        copy_to_device.encode(e);
        memoize_eviction_key.encode(e);
        debug_file.encode(e);
        async_.encode(e);
        ring_buffer.encode(e);
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for FuncSchedule {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(FuncSchedule {
            compute_level: LoopLevel::decode(d)?,
            store_level: LoopLevel::decode(d)?,
            bounds: Vec::decode(d)?,
            folds: Vec::decode(d)?,
            storage_dims: Vec::decode(d)?,
            memory_type: MemoryType::decode(d)?,
            hoist_storage_level: LoopLevel::decode(d)?,
            level_handles: [None; 3],
            memoized: bool::decode(d)?.then(crate::lang::func::next_memoize_id),
            storage_bounds: Vec::decode(d)?,
            storage_alignments: Vec::decode(d)?,
            copy_to_device: Option::decode(d)?,
            memoize_eviction_key: Option::decode(d)?,
            debug_file: Option::decode(d)?,
            async_: bool::decode(d)?,
            ring_buffer: Option::decode(d)?,
        })
    }
}

impl<E: ExprTable> Encode<E> for Specialization {
    fn encode(&self, e: &mut E) {
        let Specialization {
            condition,
            stage,
            specializations,
            failure_message,
        } = self;
        condition.encode(e);
        stage.encode(e);
        specializations.encode(e);
        failure_message.encode(e);
    }
}
impl<'a, D: ExprLookup<'a>> Decode<D> for Specialization {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(Specialization {
            condition: Expr::decode(d)?,
            stage: StageSchedule::decode(d)?,
            specializations: Vec::decode(d)?,
            failure_message: Option::decode(d)?,
        })
    }
}

impl<E: HasBytes> Encode<E> for TraceSettings {
    fn encode(&self, e: &mut E) {
        let TraceSettings {
            loads,
            stores,
            realizations,
            tags,
        } = self;
        for flag in [loads, stores, realizations] {
            flag.encode(e);
        }
        tags.encode(e);
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for TraceSettings {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(TraceSettings {
            loads: bool::decode(d)?,
            stores: bool::decode(d)?,
            realizations: bool::decode(d)?,
            tags: Vec::decode(d)?,
        })
    }
}

// Plain byte-level encoders (for tests and for values outside the graph).
impl HasBytes for Bytes {
    fn bytes(&mut self) -> &mut Bytes {
        self
    }
}
impl<'a> HasCursor<'a> for Cursor<'a> {
    fn cursor(&mut self) -> &mut Cursor<'a> {
        self
    }
}
