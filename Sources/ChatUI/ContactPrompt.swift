import Directives
import SyncCore

/// Contacts from the app: add one by its address (`a`), rename the selected one (`E`), mute or
/// unmute it (`M`). Adding and renaming ask in a prompt on the compose line; what is wrong with
/// an answer shows beside it, and the prompt stays, with its text, until Enter or Esc.
public struct ContactPrompt: Equatable, Sendable {
    public enum Step: Equatable, Sendable {
        case address
        case name(address: String)
        case rename(Address)
    }

    public var step: Step
    public var input = LineEditor()
    /// What was wrong with the last Enter, shown beside the text until the next edit.
    public var error: String?

    public init(step: Step) { self.step = step }

    public var label: String {
        switch step {
        case .address: return "add contact, address"
        case .name: return "their name"
        case .rename: return "rename to"
        }
    }
}

extension ViewModel {
    static func contactPromptKey(_ state: inout ViewState, _ key: Key) -> [Command] {
        guard var prompt = state.prompt else { return [] }
        switch key {
        case .escape, .ctrl("c"):
            state.prompt = nil
            return []
        case .enter:
            let text = prompt.input.string.trimmingCharacters(in: .whitespaces)
            switch prompt.step {
            case .address:
                guard Directive.isAddress(text) else {
                    prompt.error = "an address is kaspa: and 8 to 80 lower-case letters and digits"
                    state.prompt = prompt
                    return []
                }
                if let known = state.conversations.first(where: { $0.address.value == text }) {
                    state.notice = "\(known.name) has that address already"
                    state.prompt = nil
                    return []
                }
                state.prompt = ContactPrompt(step: .name(address: text))
                return []
            case .name(let address):
                guard !text.isEmpty else { prompt.error = "a contact needs a name"; state.prompt = prompt; return [] }
                state.prompt = nil
                return [.apply(.add(address: address, displayName: text))]
            case .rename(let address):
                guard !text.isEmpty else { prompt.error = "a contact needs a name"; state.prompt = prompt; return [] }
                state.prompt = nil
                return [.apply(.contact(handle: ViewModel.handle(state, address), displayName: text))]
            }
        case .backspace: prompt.error = nil; prompt.input.backspace()
        case .left: prompt.input.left()
        case .right: prompt.input.right()
        case .home, .ctrl("a"): prompt.input.home()
        case .end, .ctrl("e"): prompt.input.end()
        case .ctrl("u"): prompt.error = nil; prompt.input.killToStart()
        case .char(let ch): prompt.error = nil; prompt.input.insert(ch, maxBytes: 256)
        default: break
        }
        state.prompt = prompt
        return []
    }
}
