//! The analysed form of a body for compiled sweeps: tracked variables, statements in
//! their nesting, and each tracked expression as the operations the trace records, in the
//! order it records them.

use proc_macro2::{Ident, TokenStream};

/// A tracked variable: a differentiated parameter or a tracked local.
pub(crate) struct Var {
    /// The user's name (the forward half computes under it, as written).
    pub(crate) name: Ident,
    /// The adjoint's name (hygienic).
    pub(crate) adjoint: Ident,
    /// The forward half's name for its value (hygienic, so no user name shadows it).
    pub(crate) primal: Ident,
    /// How its adjoints start: `0.0` or an array of zeros.
    pub(crate) zero: TokenStream,
    /// A differentiated parameter.
    pub(crate) param: bool,
    /// How many indices reach a scalar (0 for a scalar; [`UNKNOWN`] for a `#[param]`
    /// parameter and for a call's result never read as a scalar, whose shapes the macro
    /// cannot see).
    pub(crate) depth: usize,
    /// Declared at the body's top level (or a parameter): in scope for the whole reverse
    /// half.
    pub(crate) top_level: bool,
    /// Declared `mut` or assigned.
    pub(crate) mutable: bool,
    /// Holds a call's result (see [`Stmt::Call`]).
    pub(crate) call: bool,
    /// An array's length at each level, outermost first, where the macro knows them
    /// (from a parameter's type or a local's `[0.0; N]`).
    pub(crate) lengths: Vec<TokenStream>,
    /// A growable `Vec` (`keys.push(..)`): its adjoints grow with it going forward, a row
    /// for each row, and give each row back going back, so that their length is the
    /// vector's wherever the sweeps read it.
    pub(crate) growable: bool,
}

/// The depth of a variable whose shape the macro cannot see (see [`Var::depth`]).
pub(crate) const UNKNOWN: usize = usize::MAX;

/// An index into [`Program::vars`].
pub(crate) type VarId = usize;

/// A tracked scalar place: a variable, or an element of a tracked array.
#[derive(Clone)]
pub(crate) struct Place {
    pub(crate) var: VarId,
    /// Fields of a parameter struct, as written (`.w1`), before any index.
    pub(crate) fields: TokenStream,
    /// One data expression per level, as written.
    pub(crate) indices: Vec<TokenStream>,
}

impl Place {
    /// The whole of variable `var`.
    pub(crate) fn whole(var: VarId) -> Place {
        Place {
            var,
            fields: TokenStream::new(),
            indices: Vec::new(),
        }
    }

    /// The whole variable: no field, no index.
    pub(crate) fn is_whole(&self) -> bool {
        self.fields.is_empty() && self.indices.is_empty()
    }

    /// The indices as written (`[1][j]` is `"1 j"`), to tell elements of one variable apart.
    pub(crate) fn spelled_indices(&self) -> String {
        let indices = &self.indices;
        quote::quote!(#(#indices)*).to_string()
    }

    /// What the trace's types prove about the place's shape is keyed by this.
    pub(crate) fn key(&self) -> (VarId, String, usize) {
        (self.var, self.fields.to_string(), self.indices.len())
    }
}

/// An operand of an operation.
#[derive(Clone)]
pub(crate) enum Operand {
    /// The result of an earlier operation of the same expression.
    Temp(usize),
    /// A tracked place, read.
    Place(Place),
    /// Data: a constant of the trace.
    Data(Data),
}

/// A data operand.
#[derive(Clone)]
pub(crate) struct Data {
    /// The data as written, primal reads made plain (what decides whether the reverse
    /// sweep may recompute it).
    pub(crate) raw: TokenStream,
    /// The trace's conversion of `raw` to a constant (`constant`), called on plain values
    /// so that a type error reads the same on both paths; `None` for an `f64` that is a
    /// checked value already (a detached one).
    pub(crate) convert: Option<TokenStream>,
}

/// One recorded operation.
pub(crate) struct Op {
    /// Its result's number, unique in the program.
    pub(crate) id: usize,
    /// The backend method that records it (`mul`, `tanh`, ...).
    pub(crate) method: Ident,
    pub(crate) operands: Vec<Operand>,
    /// `powi`'s exponent, as written.
    pub(crate) exponent: Option<TokenStream>,
    /// False under `detach`: recorded, but no gradient flows through it.
    pub(crate) live: bool,
}

/// A tracked expression: its operations in recording order, and what it evaluates to.
pub(crate) struct Value {
    pub(crate) ops: Vec<Op>,
    pub(crate) result: Operand,
    /// A constant condition under which the result needs no finiteness check of its own
    /// (a later check sees it): set by [`checks`](super::checks).
    pub(crate) unchecked: TokenStream,
}

impl Value {
    /// Whether an operation of it, or its result, reads variable `var`.
    pub(crate) fn reads(&self, var: VarId) -> bool {
        let operands = self.ops.iter().flat_map(|op| &op.operands);
        operands
            .chain(std::iter::once(&self.result))
            .any(|operand| matches!(operand, Operand::Place(place) if place.var == var))
    }

    /// A value whose result is checked where it is computed.
    pub(crate) fn new(ops: Vec<Op>, result: Operand) -> Value {
        Value {
            ops,
            result,
            unchecked: quote::quote!(false),
        }
    }
}

/// A statement of the body.
pub(crate) enum Stmt {
    /// Plain Rust over data (primal reads already plain), kept as written. `replay` holds
    /// a `let` the reverse half re-runs to see the same data.
    Data { tokens: TokenStream, replay: bool },
    /// A data value bound just before a call (`let name = ..;`, a [`Stmt::Data`]) that the
    /// call's reverse passes again but that may change by then (a loop's counter, a value
    /// read from primals): kept on the value stack after the call, taken back just before
    /// its reverse.
    Keep {
        name: Ident,
        /// In a helper's halves, whose reverse half is a function of its own: the type to
        /// take the value back as (`f64`, or `_` for one rustc infers from the callee's
        /// data parameter). In `name_grad`'s sweeps, `None`: the forward sweep's value
        /// types a witness both sweeps see.
        typed: Option<TokenStream>,
    },
    /// `let name = value;` of a tracked scalar.
    Let { var: VarId, value: Value },
    /// `let mut name = [data; N];`: a tracked array starting as constants.
    LetArray { var: VarId, init: TokenStream },
    /// `place = value;`.
    Assign { place: Place, value: Value },
    /// `if cond { .. } else { .. }` on data and primal values.
    If {
        cond: TokenStream,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
        flag: usize,
        /// `if let pat = scrutinee`: `pat = scrutinee` (the scrutinee steady data; `cond`
        /// is `matches!(scrutinee, pat)`). `then` runs inside `if let` of it, which binds
        /// its names, going forward and back.
        bind: Option<TokenStream>,
    },
    /// `var = g(args..)`: a call of another `#[differentiable]` function's compiled
    /// halves, through its hidden body (`path`, as the rewrite calls it) on the
    /// `Halves` backend. Its result is a scalar or an array of them (its adjoints start
    /// as [`Var::zero`], shaped by the callee's signature).
    Call {
        var: VarId,
        path: TokenStream,
        args: Vec<Arg>,
        /// `place = g(args..)`: the result is then stored into this row of a local array
        /// (`var` is read nowhere else, so its adjoints are the row's, handed over whole).
        store: Option<Place>,
        /// `place.push(g(args..))` of a growable vector (`store` is the vector): the
        /// result is its new last row.
        push: bool,
        /// Tracked scalars an array literal lends as they are (`g([x, 1.0])`), as
        /// (element of the lent local, source). The forward sweep copies each value in
        /// just before the call; the reverse sweep starts the element's adjoint at the
        /// source's and stores it back after the call, so that the callee adds into the
        /// source's sum in the trace's order (its nodes' edges go straight to the source).
        seeds: Vec<(Place, Place)>,
    },
    /// `for pat in iter { .. }` over data.
    For {
        pat: TokenStream,
        iter: TokenStream,
        /// For each tracked array the loop walks whose length the macro cannot see: the
        /// name `iter` reads it from, and the array (its `len()`, taken before the loop,
        /// from its primal going forward and from its adjoints going back).
        length: Vec<(Ident, Place)>,
        body: Vec<Stmt>,
        /// Variables checked finite after the loop rather than in it.
        after: Vec<VarId>,
        /// A `while` loop: `iter` is its condition (on data and primal values) and `pat`
        /// is empty. The forward sweep keeps a flag per iteration, and the reverse sweep
        /// runs the body backwards as many times.
        condition: bool,
        /// The body's last statement may `break` (a data `if !go { break; }`): the
        /// forward sweep keeps how many iterations ran, and the reverse sweep walks back
        /// from the last of them.
        counted: bool,
    },
}

/// An argument of a [`Stmt::Call`].
pub(crate) enum Arg {
    /// A tracked place, lent: its value goes in, its adjoint comes back.
    Tracked(Place),
    /// Data as written (steady: the reverse half passes it again).
    Data(TokenStream),
}

/// A lowered body.
pub(crate) struct Program {
    pub(crate) vars: Vec<Var>,
    pub(crate) body: Vec<Stmt>,
    pub(crate) output: Value,
    /// Indices kept for the output (`let last = w[j]; .. last`, see `Lower::kept_indices`):
    /// [`Stmt::Keep`]s run after the output going forward and taken back before its
    /// reverse, where a half's reverse function has them in scope.
    pub(crate) epilogue: Vec<Stmt>,
}
