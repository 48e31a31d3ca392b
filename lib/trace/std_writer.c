/* stub: to be written */
