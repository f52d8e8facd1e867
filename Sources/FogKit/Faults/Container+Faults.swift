extension Container {
    /// The faults this container injects into its own requests (``FaultPlan/none`` by
    /// default). Setting a plan takes effect for the next request of any of the
    /// container's databases and starts its triggers' counts afresh; other containers of
    /// the same store, and other processes, are not affected.
    ///
    /// ```swift
    /// container.faultPlan = FaultPlan([.init(.error(.networkUnavailable), requests: [.modifyRecords])])
    /// ```
    public var faultPlan: FaultPlan {
        get { faults.plan }
        set { faults.plan = newValue }
    }
}
