pub fn run() -> crate::util::Result {
    Ok(())
}
