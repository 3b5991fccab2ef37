// A textured, tinted sprite: vertex + pixel shader, a constant buffer holding a matrix, a texture
// and a sampler. examples/sprite.py renders it offscreen with wgpu-py into a PNG.
cbuffer Frame
{
    float4x4 Transform; // clip-space transform of the quad, set in math (row-major) order
    float4 Tint;        // multiplies the texel
    float2 Offset;      // added to the clip-space position
    float Scale;        // scales the texture coordinates
    float Time;
};

Texture2D<float4> SpriteTexture;
SamplerState SpriteSampler;

struct VSInput
{
    float2 Position : POSITION;
    float2 TexCoord : TEXCOORD0;
};

struct VSOutput
{
    float4 Position : SV_Position;
    float2 TexCoord : TEXCOORD0;
};

[shader("vertex")]
VSOutput VSMain(VSInput input)
{
    VSOutput output;
    output.Position = mul(Transform, float4(input.Position, 0.0, 1.0)) + float4(Offset, 0.0, 0.0);
    output.TexCoord = input.TexCoord * Scale;
    return output;
}

[shader("pixel")]
float4 PSMain(VSOutput input) : SV_Target0
{
    float4 texel = SpriteTexture.Sample(SpriteSampler, input.TexCoord);
    return texel * Tint;
}
