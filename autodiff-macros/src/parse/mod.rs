//! Reading the item before anything is analysed: how deep it nests (`nesting`: syn's
//! parser recurses on the compiler's stack), the attribute's arguments (`args`), and the
//! signature (`signature`: which parameters are differentiated, in which shape, and which
//! are data).

pub(crate) mod args;
pub(crate) mod nesting;
pub(crate) mod signature;
