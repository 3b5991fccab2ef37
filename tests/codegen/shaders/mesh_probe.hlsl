// Instanced quads with per-object data: a per-frame constant buffer, a push block (on WGSL a
// uniform buffer, bound at a dynamic offset per object), per-vertex and per-instance inputs.
cbuffer Frame
{
    float4 Tint;
    float Scale;
};

struct ObjectData
{
    float4 Color;
    float2 Offset;
};
[[vk::push_constant]] ObjectData Object;

struct VSIn
{
    float2 Corner : POSITION;  // per vertex
    float2 Shift : SHIFT;      // per instance
    uint Dim : DIM;            // per instance: 1 halves the colour
};

struct VSOut
{
    float4 Position : SV_Position;
    float4 Color : COLOR0;
};

[shader("vertex")]
VSOut VSMain(VSIn i)
{
    VSOut o;
    o.Position = float4(i.Corner * Scale + i.Shift + Object.Offset, 0.0, 1.0);
    o.Color = Object.Color * Tint * (i.Dim == 1 ? 0.5 : 1.0);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    return i.Color;
}
